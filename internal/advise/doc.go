// Package advise turns the figures of TCP tests into a verdict on what
// limited them and advice on what to change. Classify names the limit of
// a single stream (the first of an ordered list of rules that holds),
// Recommend gives the changes with numbers (socket buffers, sysctls, -P),
// and Analyze builds the report of a guided run, whose test lengths and
// stream counts the planning functions choose. It measures nothing
// itself: internal/advise/guide runs the tests.
package advise
