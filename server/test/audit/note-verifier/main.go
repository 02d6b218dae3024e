// note-verifier checks a C2SP signed note with golang.org/x/mod/sumdb/note, independently of
// StackShip's code: `note-verifier <verifier key> < note`. It prints the verified text and exits 0,
// or prints why not and exits 1.
package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/mod/sumdb/note"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: note-verifier <verifier key> < note")
		os.Exit(2)
	}
	verifier, err := note.NewVerifier(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad verifier key:", err)
		os.Exit(2)
	}
	msg, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	n, err := note.Open(msg, note.VerifierList(verifier))
	if err != nil {
		fmt.Fprintln(os.Stderr, "refused:", err)
		os.Exit(1)
	}
	fmt.Print(n.Text)
}
