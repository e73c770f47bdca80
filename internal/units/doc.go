// Package units parses and prints the quantities wireperf's flags and
// reports use, with iperf's conventions (docs/metrics.md, "Units"):
// transfers are counted in powers of two (KBytes = 1024 B), rates in
// powers of ten (Mbits/sec = 10^6 bit/s). On input a size's lower-case
// suffixes k, m, g, t are powers of 10^3 and its upper-case K, M, G, T
// powers of 2^10; a rate's suffix is a power of 10^3 in either case, as
// iperf3 reads -b.
package units
