# flake8: noqa

# import apis into api package
from stackship_client.api.audit_api import AuditApi
from stackship_client.api.configuration_versions_api import ConfigurationVersionsApi
from stackship_client.api.downloads_api import DownloadsApi
from stackship_client.api.github_api import GithubApi
from stackship_client.api.health_api import HealthApi
from stackship_client.api.organizations_api import OrganizationsApi
from stackship_client.api.policies_api import PoliciesApi
from stackship_client.api.projects_api import ProjectsApi
from stackship_client.api.reference_api import ReferenceApi
from stackship_client.api.runs_api import RunsApi
from stackship_client.api.sessions_api import SessionsApi
from stackship_client.api.tokens_api import TokensApi
from stackship_client.api.users_api import UsersApi
from stackship_client.api.variables_api import VariablesApi
from stackship_client.api.workload_identity_api import WorkloadIdentityApi
from stackship_client.api.workspaces_api import WorkspacesApi

