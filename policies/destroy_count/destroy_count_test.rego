package stackship.destroy_count_test

import rego.v1

import data.stackship.destroy_count

deletes(n) := [{"address": sprintf("terraform_data.d%d", [i]), "change": {"actions": ["delete"]}} | some i in numbers.range(1, n)]

test_six_destroys_are_reported if {
	findings := destroy_count.violations with input as {"resource_changes": deletes(6)}
	count(findings) == 1
	some f in findings
	contains(f.message, "destroys 6 resources")
	not "address" in object.keys(f)
}

test_five_destroys_pass if {
	count(destroy_count.violations) == 0 with input as {"resource_changes": deletes(5)}
}

test_creates_do_not_count if {
	plan := {"resource_changes": [{"address": "terraform_data.x", "change": {"actions": ["create"]}} | some _ in numbers.range(1, 10)]}
	count(destroy_count.violations) == 0 with input as plan
}
