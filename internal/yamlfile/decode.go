package yamlfile

import (
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxProblems bounds the mistakes one Decode reports.
const maxProblems = 10

// Decode sets v, a pointer to a struct, from the document as the yaml
// package would, and refuses a key that isn't one of the struct's (its
// fields' yaml names, inline structs' included), naming the keys it
// knows. Each mistake is at its own line and column: unknown keys and
// values that don't fit their field are all reported, as Errors, up to
// a bound. An empty document leaves v as it is.
func (d *Doc) Decode(v any) error {
	if d.Root == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic("yamlfile: Decode wants a pointer")
	}
	dec := decoder{doc: d}
	dec.value(d.Root, "", rv.Elem())
	switch len(dec.problems) {
	case 0:
		return nil
	case 1:
		return dec.problems[0]
	}
	return dec.problems
}

type decoder struct {
	doc      *Doc
	problems Errors
}

func (dec *decoder) fail(err error) {
	if len(dec.problems) < maxProblems {
		dec.problems = append(dec.problems, err.(*Error))
	}
}

// value sets v from n. Structs and lists of structs are walked here, so
// that their keys are checked; anything else is the yaml package's.
func (dec *decoder) value(n *yaml.Node, key string, v reflect.Value) {
	if isNull(n) {
		if err := n.Decode(v.Addr().Interface()); err != nil {
			dec.fail(dec.doc.decodeError(n, key, err))
		}
		return
	}
	t := v.Type()
	switch {
	case t.Kind() == reflect.Pointer && holdsStruct(t.Elem()):
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		dec.value(n, key, v.Elem())
	case t.Kind() == reflect.Struct:
		dec.object(n, key, v)
	case t.Kind() == reflect.Slice && holdsStruct(t.Elem()):
		if n.Kind != yaml.SequenceNode {
			dec.fail(dec.doc.Errorf(n, key, "want a list"))
			return
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			dec.value(item, key+"["+strconv.Itoa(i)+"]", s.Index(i))
		}
		v.Set(s)
	default:
		if err := n.Decode(v.Addr().Interface()); err != nil {
			dec.fail(dec.doc.decodeError(n, key, err))
		}
	}
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// holdsStruct says whether t is a struct, or a pointer to one.
func holdsStruct(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

// object sets the struct v from the mapping n, key by key.
func (dec *decoder) object(n *yaml.Node, key string, v reflect.Value) {
	if n.Kind != yaml.MappingNode {
		dec.fail(dec.doc.Errorf(n, key, "want a mapping"))
		return
	}
	fields := map[string][]int{}
	var known []string
	structFields(v.Type(), nil, fields, &known)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.ShortTag() == "!!merge" && val.Kind == yaml.MappingNode {
			// "<<: {…}" lays its keys here, as the yaml package does (its
			// other form, of aliases, Read has refused).
			dec.object(val, key, v)
			continue
		}
		index, ok := fields[k.Value]
		if !ok {
			dec.fail(dec.doc.Unknown(k, key, known).(*Error))
			continue
		}
		dec.value(val, Join(key, k.Value), fieldByIndex(v, index))
	}
}

// structFields adds the yaml names of t's fields to fields (each one's
// index path from the outer struct) and known, in the struct's order;
// an inline struct's fields are its outer struct's.
func structFields(t reflect.Type, at []int, fields map[string][]int, known *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		index := append(append([]int(nil), at...), i)
		if strings.Contains(","+opts+",", ",inline,") && f.Type.Kind() == reflect.Struct {
			structFields(f.Type, index, fields, known)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name) // the yaml package's default
		}
		fields[name] = index
		*known = append(*known, name)
	}
}

// fieldByIndex is v's field at index, through inline structs.
func fieldByIndex(v reflect.Value, index []int) reflect.Value {
	for _, i := range index {
		v = v.Field(i)
	}
	return v
}

// decodeError is the yaml package's error in decoding n as an *Error at
// n: its "line N:" is n's position, said once.
func (d *Doc) decodeError(n *yaml.Node, key string, err error) error {
	var msgs []string
	if te, ok := err.(*yaml.TypeError); ok {
		for _, m := range te.Errors {
			_, m = cutLine(m)
			msgs = append(msgs, m)
		}
	} else {
		_, m := cutLine(strings.TrimPrefix(err.Error(), "yaml: "))
		msgs = append(msgs, m)
	}
	return d.Errorf(n, key, "%s", strings.ReplaceAll(strings.Join(msgs, "; "), "\n", "; "))
}
