# Soft-mandatory: resources that support tags are created or updated with the required tags.
#
# A resource supports tags when its planned values have a `tags` attribute. The required tag
# keys are `owner` and `environment`; copy this policy and edit `required` to change them.
package stackship.required_tags

import rego.v1

required := {"owner", "environment"}

violations contains finding if {
	some rc in input.resource_changes
	some action in rc.change.actions
	action in {"create", "update"}
	after := rc.change.after
	is_object(after)
	"tags" in object.keys(after)
	present := {key | some key, value in object.get(after, "tags", {}); value != ""}
	missing := required - present
	count(missing) > 0
	finding := {
		"title": "Required tags missing",
		"message": sprintf("%s is missing the required tags %v.", [rc.address, sort(missing)]),
		"address": rc.address,
	}
}
