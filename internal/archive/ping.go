package archive

import "context"

// Ping says whether the archive's database answers now.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }
