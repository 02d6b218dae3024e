module stackship.local/sandbox-seccomp

go 1.23.0

require (
	github.com/elastic/go-seccomp-bpf v1.6.0
	golang.org/x/net v0.41.0
	golang.org/x/sys v0.33.0
)
