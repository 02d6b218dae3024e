module stackship.dev/test/note-verifier

go 1.26

require golang.org/x/mod v0.35.0
