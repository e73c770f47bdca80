package sockopt

import (
	"strings"
	"testing"
)

func TestValidateNamesOption(t *testing.T) {
	tests := []struct {
		o    Options
		want string // the option the error must name; "" for no error
	}{
		{Options{}, ""},
		{Options{SndBuf: 1, RcvBuf: 1, MSS: 536, TOS: 255}, ""},
		{Options{SndBuf: -1}, "SO_SNDBUF -1"},
		{Options{RcvBuf: -2}, "SO_RCVBUF -2"},
		{Options{MSS: -3}, "TCP_MAXSEG -3"},
		{Options{TOS: 256}, "IP_TOS 256"},
		{Options{TOS: -1}, "IP_TOS -1"},
	}
	for _, tt := range tests {
		err := tt.o.validate()
		if tt.want == "" {
			if err != nil {
				t.Errorf("%+v: unexpected error %v", tt.o, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want it to contain %q", tt.o, err, tt.want)
		}
	}
}

func TestSetErrFormat(t *testing.T) {
	cause := errString("no such file or directory")
	tests := []struct {
		name  string
		value any
		want  string
	}{
		{"TCP_CONGESTION", "foo", `setting TCP_CONGESTION "foo": no such file or directory`},
		{"SO_SNDBUF", 65536, `setting SO_SNDBUF 65536: no such file or directory`},
		{"TCP_NODELAY", true, `setting TCP_NODELAY true: no such file or directory`},
	}
	for _, tt := range tests {
		if got := setErr(tt.name, tt.value, cause).Error(); got != tt.want {
			t.Errorf("setErr = %q, want %q", got, tt.want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
