// Package units parses and prints the quantities wireperf's flags and
// reports use, with iperf's conventions (docs/metrics.md, "Units"):
// transfers are counted in powers of two (KBytes = 1024 B), rates in
// powers of ten (Mbits/sec = 10^6 bit/s). On input, lower-case suffixes
// k, m, g, t are powers of 10^3 and upper-case K, M, G, T powers of 2^10.
package units
