// Package figures derives the figures a report shows from a finished
// test's result: the limited-time shares and RFC 6349's figures of a TCP
// direction, when slow start ended, the line-rate arithmetic, and where
// lost UDP datagrams were dropped. Everything here is a pure function of
// result types, so that the emitters, advise and any later reader of
// results compute each figure in one place.
package figures
