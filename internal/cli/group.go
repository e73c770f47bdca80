package cli

import (
	"github.com/wireperf/wireperf/internal/agent"
	"github.com/wireperf/wireperf/internal/auth"
)

// agentOf is the server's --agent role, or nil without --agent.
func agentOf(on bool, keyFile string) (*agent.Agent, error) {
	switch {
	case !on && keyFile != "":
		return nil, usagef("--agent-key-file needs --agent")
	case !on:
		return nil, nil
	case keyFile == "":
		return nil, usagef("--agent needs --agent-key-file: an agent only serves controllers that hold a key")
	}
	keys, err := auth.LoadKeys(keyFile)
	if err != nil {
		return nil, usageError{err}
	}
	return &agent.Agent{Keys: keys}, nil
}
