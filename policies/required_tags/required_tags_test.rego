package stackship.required_tags_test

import rego.v1

import data.stackship.required_tags

change(address, actions, after) := {"address": address, "change": {"actions": actions, "before": null, "after": after}}

test_missing_tags_are_a_violation if {
	plan := {"resource_changes": [change("aws_instance.web", ["create"], {"tags": {"owner": "team-a"}})]}
	findings := required_tags.violations with input as plan
	count(findings) == 1
	some f in findings
	f.address == "aws_instance.web"
	contains(f.message, "environment")
}

test_null_tags_are_a_violation if {
	plan := {"resource_changes": [change("aws_instance.web", ["update"], {"tags": null})]}
	count(required_tags.violations) == 1 with input as plan
}

test_all_tags_present_passes if {
	plan := {"resource_changes": [change("aws_instance.web", ["create"], {"tags": {"owner": "a", "environment": "prod"}})]}
	count(required_tags.violations) == 0 with input as plan
}

test_untaggable_resource_passes if {
	plan := {"resource_changes": [change("terraform_data.x", ["create"], {"input": "x"})]}
	count(required_tags.violations) == 0 with input as plan
}

test_delete_is_not_checked if {
	plan := {"resource_changes": [change("aws_instance.old", ["delete"], null)]}
	count(required_tags.violations) == 0 with input as plan
}
