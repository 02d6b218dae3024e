package stackship.protected_resources_test

import rego.v1

import data.stackship.protected_resources

change(address, actions, before) := {"address": address, "change": {"actions": actions, "before": before, "after": null}}

test_delete_of_protected_tag_is_a_violation if {
	plan := {"resource_changes": [change("aws_s3_bucket.logs", ["delete"], {"tags": {"protected": "true"}})]}
	findings := protected_resources.violations with input as plan
	count(findings) == 1
	some f in findings
	f.address == "aws_s3_bucket.logs"
	contains(f.message, "delete")
}

test_replace_of_protected_attribute_is_a_violation if {
	plan := {"resource_changes": [change("terraform_data.db", ["delete", "create"], {"input": {"protected": true}})]}
	some f in protected_resources.violations with input as plan
	contains(f.message, "replace")
}

test_update_of_protected_resource_passes if {
	plan := {"resource_changes": [change("aws_s3_bucket.logs", ["update"], {"tags": {"protected": "true"}})]}
	count(protected_resources.violations) == 0 with input as plan
}

test_delete_of_unprotected_resource_passes if {
	plan := {"resource_changes": [change("aws_s3_bucket.tmp", ["delete"], {"tags": {"protected": "false"}})]}
	count(protected_resources.violations) == 0 with input as plan
}

test_create_only_passes if {
	plan := {"resource_changes": [change("aws_s3_bucket.new", ["create"], null)]}
	count(protected_resources.violations) == 0 with input as plan
}
