// Command wireperf measures network paths. See the README.
package main

import (
	"os"

	"github.com/wireperf/wireperf/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
