// Package archiveview shows what the archive holds to the commands that
// read it: which runs a --where picks, the runs one a line or as JSON
// (wireperf runs), a stored run's report again (wireperf show), the
// scheduled tasks (wireperf task list) and the runs to come as a
// timeline (wireperf schedule).
package archiveview
