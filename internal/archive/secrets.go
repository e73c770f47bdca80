package archive

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// How a PostgreSQL DSN is told from an SQLite path, and how its password
// is kept out of everything stored and printed. libpq takes two forms:
// a URL (postgres:// or postgresql://, any case) and key=value words
// (host=db password='a b'); both are PostgreSQL here. "sqlite:PATH"
// names an SQLite file whatever PATH holds.

// pgKeywords are libpq's connection keywords: a DSN of key=value words
// with one of these is PostgreSQL's.
var pgKeywords = map[string]bool{
	"host": true, "hostaddr": true, "port": true, "dbname": true, "user": true, "password": true,
	"passfile": true, "sslmode": true, "sslrootcert": true, "sslcert": true, "sslkey": true,
	"sslpassword": true, "connect_timeout": true, "application_name": true, "options": true,
	"target_session_attrs": true, "service": true, "channel_binding": true,
}

// dsnScheme is the URL scheme dsn begins with ("mysql" in mysql://h/db),
// "" if none. A scheme is a letter, then letters, digits, '+', '-' or
// '.', then "://"; it must be two characters or more, so that a Windows
// drive (C:\x, C://x) stays a path, as does a relative path (./a://b).
func dsnScheme(dsn string) string {
	s := strings.TrimSpace(dsn)
	i := strings.Index(s, "://")
	if i < 2 {
		return ""
	}
	for j, c := range s[:i] {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return ""
		}
	}
	return s[:i]
}

// checkScheme refuses a DSN that begins with a URL scheme wireperf does
// not read, rather than taking it for a file path. "sqlite" is the only
// other scheme, and in lower case only, as openSQLite reads it.
func checkScheme(dsn string) error {
	if !hasServerScheme(dsn) || isURLDSN(dsn) {
		return nil
	}
	return &kindError{
		msg:  fmt.Sprintf("unknown scheme %q: want a file path, sqlite:PATH, postgres://... or postgresql://...", dsnScheme(dsn)),
		kind: ErrUnknownScheme,
	}
}

// hasServerScheme says whether dsn is a URL other than sqlite:'s, such as
// postgres://U:P@H/D or one refused (mysql://U:P@H/D): a URL whose
// password is to be hidden (isURLDSN is the PostgreSQL part of these).
func hasServerScheme(dsn string) bool {
	sc := dsnScheme(dsn)
	return sc != "" && sc != "sqlite"
}

// isPostgres says whether dsn names a PostgreSQL server.
func isPostgres(dsn string) bool {
	if isURLDSN(dsn) {
		return true
	}
	_, ok := keyValueDSN(dsn)
	return ok
}

func isURLDSN(dsn string) bool {
	l := strings.ToLower(strings.TrimSpace(dsn))
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// kv is one key=value word of a DSN.
type kv struct{ key, value string }

// keyValueDSN reads libpq's key=value form: words of key=value, a value
// in single quotes with backslash escapes where it has blanks. ok is
// false unless every word is key=value and one key is libpq's.
func keyValueDSN(s string) (pairs []kv, ok bool) {
	if strings.HasPrefix(s, "sqlite:") {
		return nil, false
	}
	known := false
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
			i++
		}
		if i == len(s) {
			break
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq <= 0 {
			return nil, false
		}
		key := strings.TrimSpace(s[i : i+eq])
		if key == "" || strings.ContainsAny(key, " \t/\\'") {
			return nil, false
		}
		i += eq + 1
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		var v strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			closed := false
			for i < len(s) {
				c := s[i]
				if c == '\\' && i+1 < len(s) {
					v.WriteByte(s[i+1])
					i += 2
					continue
				}
				i++
				if c == '\'' {
					closed = true
					break
				}
				v.WriteByte(c)
			}
			if !closed {
				return nil, false
			}
		} else {
			for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' {
				v.WriteByte(s[i])
				i++
			}
		}
		if pgKeywords[strings.ToLower(key)] {
			known = true
		}
		pairs = append(pairs, kv{key, v.String()})
	}
	return pairs, known && len(pairs) > 0
}

// dsnPassword is the password a DSN carries, "" if none.
func dsnPassword(dsn string) string {
	if hasServerScheme(dsn) {
		u, err := url.Parse(strings.TrimSpace(dsn))
		if err != nil {
			return ""
		}
		if pw, ok := u.User.Password(); ok && pw != "" {
			return pw
		}
		return u.Query().Get("password")
	}
	pairs, _ := keyValueDSN(dsn)
	for _, p := range pairs {
		if strings.EqualFold(p.key, "password") {
			return p.value
		}
	}
	return ""
}

// secretKeys are the DSN keywords whose values are kept out of everything
// stored and printed: the password, the password of the client key
// (sslpassword), and the password file's path (passfile), which names
// where the passwords are.
var secretKeys = map[string]bool{"password": true, "sslpassword": true, "passfile": true}

func isSecretKey(key string) bool { return secretKeys[strings.ToLower(key)] }

// Redact returns the DSN without its secrets (secretKeys, and a URL's
// password), for messages and what is stored.
func Redact(dsn string) string {
	switch {
	case hasServerScheme(dsn):
		u, err := url.Parse(strings.TrimSpace(dsn))
		if err != nil {
			return RedactSecrets(dsn)
		}
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		changed := false
		for k := range q {
			if isSecretKey(k) {
				q[k] = []string{"xxxxx"}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
		return u.String()
	case isPostgres(dsn):
		pairs, _ := keyValueDSN(dsn)
		words := make([]string, 0, len(pairs))
		for _, p := range pairs {
			v := p.value
			if isSecretKey(p.key) {
				v = "xxxxx"
			} else if v == "" || strings.ContainsAny(v, " \t'\\") {
				v = "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
			}
			words = append(words, p.key+"="+v)
		}
		return strings.Join(words, " ")
	}
	return dsn
}

var (
	// urlPassword is a URL's user:password@, of any scheme.
	urlPassword = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@'"]*:)[^\s@]*@`)
	// kvSecret is key=value of a secret key (secretKeys, and the
	// environment's PGPASSWORD) in a key=value DSN or a URL's query: the
	// value in libpq's single quotes (with backslash escapes), in a
	// shell's double quotes, or bare up to a blank, quote or '&'. The key
	// must start a word: sslpassword is not password's.
	kvSecret = regexp.MustCompile(`(?i)(^|[^a-z0-9_])((?:ssl|pg)?password|passfile)(\s*=\s*)('(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|[^\s&'"]*)`)
)

// RedactSecrets removes every secret it can find in a text such as a
// command line or an error: a URL's user:password@, and the value of
// any password=, sslpassword=, passfile= (a URL's query, a key=value DSN,
// quoted or not). The archive applies it to every command line and error
// it stores.
func RedactSecrets(s string) string {
	s = urlPassword.ReplaceAllString(s, "${1}xxxxx@")
	return kvSecret.ReplaceAllString(s, "${1}${2}${3}xxxxx")
}

// PostgresDSN is a PostgreSQL DSN as the driver reads it: a URL's scheme
// in lower case (the driver knows no other), key=value words as given.
func PostgresDSN(dsn string) string {
	dsn = strings.TrimSpace(dsn)
	if isURLDSN(dsn) {
		i := strings.Index(dsn, "://")
		return strings.ToLower(dsn[:i]) + dsn[i:]
	}
	return dsn
}
