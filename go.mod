module github.com/wireperf/wireperf

go 1.26.8
