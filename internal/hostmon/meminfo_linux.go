package hostmon

import "os"

// ReadMemUsed returns the bytes of memory in use, from /proc/meminfo.
func ReadMemUsed() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	return ParseMemUsed(data)
}
