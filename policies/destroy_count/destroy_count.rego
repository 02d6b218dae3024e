# Advisory: a plan that destroys many resources at once deserves a second look.
#
# Reports one finding when more than `max_destroys` resources would be deleted (a replace
# counts as a delete).
package stackship.destroy_count

import rego.v1

max_destroys := 5

destroyed := [rc.address | some rc in input.resource_changes; "delete" in rc.change.actions]

violations contains finding if {
	count(destroyed) > max_destroys
	finding := {
		"title": "Many resources destroyed",
		"message": sprintf("This plan destroys %d resources (more than %d): %s.", [count(destroyed), max_destroys, concat(", ", sort(destroyed))]),
	}
}
