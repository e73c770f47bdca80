// Command soakjudge judges a bench/soak.sh run: whether the server's live
// heap, descriptors and goroutines grew over the soak, from a least-squares
// trend over all samples after the warm-up, and what size of leak the run
// could have caught. Its RSS is reported with a generous bound: it follows
// the collector's timing more than what the server holds.
//
//	soakjudge -proc FILE -log SERVER.LOG [-warm 30]
//
// FILE has a line a second: Unix time, VmRSS in KiB, open descriptors.
// SERVER.LOG is the server's JSON log with a "server status" line a second.
// It exits 1 when a figure grows, 2 when it cannot judge.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	procPath := flag.String("proc", "", "the soak's /proc samples")
	logPath := flag.String("log", "", "the server's JSON log")
	warm := flag.Float64("warm", 30, "seconds of warm-up to leave out")
	window := flag.Float64("window", 10, "seconds per sample the trend is fitted to")
	flag.Parse()
	if *procPath == "" || *logPath == "" {
		fmt.Fprintln(os.Stderr, "soakjudge: -proc and -log are required")
		os.Exit(2)
	}
	run, err := load(*procPath, *logPath)
	if err == nil {
		var r report
		r, err = run.judge(*warm, *window)
		if err == nil {
			fmt.Print(r)
			if r.growing() {
				os.Exit(1)
			}
			return
		}
	}
	fmt.Fprintln(os.Stderr, "soakjudge:", err)
	os.Exit(2)
}
