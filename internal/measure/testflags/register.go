package testflags

import (
	"fmt"

	"github.com/spf13/pflag"
)

// Binds is what each declared flag of a command sets, by long name: a
// *bool, *int, *int64 or *string, whose value when registered is the
// flag's default; a pflag.Value, whose String() is; or, for a Shared
// flag, the *pflag.Flag its helper registered (Adopt).
type Binds map[string]any

// Register adds to fs each flag of decls, in their order, with its
// declared name, shorthand and help, bound as binds says. A command's
// flags are made only so: a declared flag with no binding, a binding
// with no declaration, or a binding whose type contradicts the declared
// kind is a programming error, and Register panics as the command is
// built (every cli test builds them all).
func Register(fs *pflag.FlagSet, decls []Flag, binds Binds) {
	seen := make(map[string]bool, len(decls))
	for _, d := range decls {
		b, ok := binds[d.Name]
		if !ok {
			panic(fmt.Sprintf("testflags: --%s is declared but not bound", d.Name))
		}
		seen[d.Name] = true
		register(fs, d, b)
	}
	for name := range binds {
		if !seen[name] {
			panic(fmt.Sprintf("testflags: --%s is bound but not declared", name))
		}
	}
}

func register(fs *pflag.FlagSet, d Flag, bind any) {
	if f, ok := bind.(*pflag.Flag); ok {
		if !d.Shared || f.Name != d.Name || f.Shorthand != d.Short || (f.Value.Type() == "bool") != (d.Kind == Bool) {
			panic(fmt.Sprintf("testflags: --%s: the adopted flag is not the declared one", d.Name))
		}
		fs.AddFlag(f)
		return
	}
	if d.Shared || d.Help == "" {
		panic(fmt.Sprintf("testflags: --%s: a flag of its own needs its help, a shared one its helper's flag", d.Name))
	}
	switch p := bind.(type) {
	case *bool:
		d.mustBe(true)
		fs.BoolVarP(p, d.Name, d.Short, *p, d.Help)
	case *int:
		d.mustBe(false)
		fs.IntVarP(p, d.Name, d.Short, *p, d.Help)
	case *int64:
		d.mustBe(false)
		fs.Int64VarP(p, d.Name, d.Short, *p, d.Help)
	case *string:
		d.mustBe(false)
		fs.StringVarP(p, d.Name, d.Short, *p, d.Help)
	case *float64:
		d.mustBe(false)
		fs.Float64VarP(p, d.Name, d.Short, *p, d.Help)
	case pflag.Value:
		d.mustBe(p.Type() == "bool")
		fs.VarP(p, d.Name, d.Short, d.Help)
	default:
		panic(fmt.Sprintf("testflags: --%s: cannot bind a %T", d.Name, bind))
	}
	if d.NoOpt != "" {
		fs.Lookup(d.Name).NoOptDefVal = d.NoOpt
	}
}

// mustBe panics when the declared kind and the bound variable disagree
// on whether the flag takes a value.
func (d Flag) mustBe(takesNoValue bool) {
	if (d.Kind == Bool) != takesNoValue {
		panic(fmt.Sprintf("testflags: --%s: declared kind and bound variable disagree on taking a value", d.Name))
	}
}

// Adopt is the bindings of the Shared flags a helper registered on fs,
// to give Register with a command's own.
func Adopt(fs *pflag.FlagSet) Binds {
	b := Binds{}
	fs.VisitAll(func(f *pflag.Flag) { b[f.Name] = f })
	return b
}

// Measured is decls without the ones the command line binds (CLI): the
// flags of a test as package measure parses it.
func Measured(decls []Flag) []Flag {
	var out []Flag
	for _, d := range decls {
		if !d.CLI {
			out = append(out, d)
		}
	}
	return out
}

// With is b and more: a command's measurement bindings and the command
// line's own. A name in both is a programming error.
func (b Binds) With(more Binds) Binds {
	out := make(Binds, len(b)+len(more))
	for k, v := range b {
		out[k] = v
	}
	for k, v := range more {
		if _, dup := out[k]; dup {
			panic("testflags: --" + k + " is bound twice")
		}
		out[k] = v
	}
	return out
}
