// Package emit renders a result.Result for people and programs: Text in
// iperf's style, JSON in iperf3's -J layout (so tools that parse iperf3
// read it unchanged) and JSONStream, one event per line as the test runs.
// Emitters only read results; one file holds each format.
package emit
