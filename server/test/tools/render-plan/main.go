// render-plan: renders a plan the way the OpenTofu CLI renders a remote run's plan
// (`jsonformat.Renderer.RenderHumanPlan`, the code the cloud backend runs on the body of
// GET /api/v2/plans/{id}/json-output-redacted), without colour, to stdout. A test tool
// (server/test/support/render-plan.ts builds it against the pinned OpenTofu module).
//
//	render-plan redacted < redacted.json          decode it as jsonformat.Plan and render it
//	render-plan local plan.json schemas.json      the same from `tofu show -json` and
//	                                              `tofu providers schema -json`, unredacted
//
// Exit 1 when the input does not decode.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/mitchellh/colorstring"

	"github.com/opentofu/opentofu/internal/command/jsonformat"
	"github.com/opentofu/opentofu/internal/plans"
	"github.com/opentofu/opentofu/internal/terminal"
)

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func decodeFile(path string, into any) {
	f, err := os.Open(path)
	if err != nil {
		fail("%s", err)
	}
	defer f.Close()
	if err := json.NewDecoder(f).Decode(into); err != nil {
		fail("decode %s: %s", path, err)
	}
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: render-plan redacted | local plan.json schemas.json")
	}
	var plan jsonformat.Plan
	switch os.Args[1] {
	case "redacted":
		decoder := json.NewDecoder(os.Stdin)
		decoder.DisallowUnknownFields()
		if err := decoder.Decode(&plan); err != nil {
			fail("decode: %s", err)
		}
	case "local":
		if len(os.Args) != 4 {
			fail("usage: render-plan local plan.json schemas.json")
		}
		var shown struct {
			FormatVersion string `json:"format_version"`
		}
		decodeFile(os.Args[2], &shown)
		decodeFile(os.Args[2], &plan)
		plan.PlanFormatVersion = shown.FormatVersion
		var schemas struct {
			FormatVersion string                     `json:"format_version"`
			Schemas       map[string]json.RawMessage `json:"provider_schemas"`
		}
		decodeFile(os.Args[3], &schemas)
		decodeFile(os.Args[3], &plan)
		plan.ProviderFormatVersion = schemas.FormatVersion
	default:
		fail("unknown mode %q", os.Args[1])
	}
	streams := &terminal.Streams{
		Stdout: &terminal.OutputStream{File: os.Stdout},
		Stderr: &terminal.OutputStream{File: os.Stderr},
		Stdin:  &terminal.InputStream{File: os.Stdin},
	}
	renderer := jsonformat.Renderer{Streams: streams, Colorize: &colorstring.Colorize{Colors: colorstring.DefaultColors, Disable: true}}
	renderer.RenderHumanPlan(plan, plans.NormalMode)
}
