// Package recipes is the tested code of docs/recipes.md: how to protect the calls a service
// makes to each kind of dependency, starting from the README's recommended rules. Each file is
// one recipe, written to be copied into a service:
//
//   - postgres.go: PostgreSQL through a connection pool such as pgx's, behind [Querier].
//   - partner.go: a partner's HTTP API with a per-second quota, answering 429 beyond it.
//   - cache.go: a cache such as Redis or memcached in front of the database, behind [Cache].
//
// The gRPC recipe is an example in contrib/grpc, a module of its own. The tests run every recipe
// offline, against fakes and a loopback server, on a fake clock.
package recipes
