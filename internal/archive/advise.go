package archive

// An advise report (`wireperf advise --save`) is stored as a run of its
// own: no axes and no summary, so that tables and figures of a campaign
// leave it out, and its -J document, verdict, evidence, advice and the
// tests' full results, kept byte for byte under its own format.

// SourceAdvise is the source of a stored advise report.
const SourceAdvise = "advise"

// FormatAdviseJSON is the document format of an advise report: the JSON
// `wireperf advise -J` prints.
const FormatAdviseJSON = "advise-json"

// IsAdvise says a run is a stored advise report.
func (r *Run) IsAdvise() bool { return r.DocumentFormat == FormatAdviseJSON }
