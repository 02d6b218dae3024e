# Hard-mandatory: never delete or replace a resource that is marked protected.
#
# A resource is protected when, before the change, it carries a `protected` tag or label
# (`tags`, `tags_all`, `labels`) set to "true", or a top-level `protected` attribute that is
# true (terraform_data: an `input` object with `protected = true`).
package stackship.protected_resources

import rego.v1

truthy(value) if value == true

truthy(value) if lower(sprintf("%v", [value])) == "true"

protected(before) if truthy(before.protected)

protected(before) if truthy(before.tags.protected)

protected(before) if truthy(before.tags_all.protected)

protected(before) if truthy(before.labels.protected)

protected(before) if truthy(before.input.protected)

violations contains finding if {
	some rc in input.resource_changes
	"delete" in rc.change.actions
	protected(rc.change.before)
	kind := replace_or_delete(rc.change.actions)
	finding := {
		"title": "Protected resource would be destroyed",
		"message": sprintf("%s is marked protected and this plan would %s it. Remove the protection in a separate, reviewed change first.", [rc.address, kind]),
		"address": rc.address,
	}
}

replace_or_delete(actions) := "replace" if "create" in actions

replace_or_delete(actions) := "delete" if not "create" in actions
