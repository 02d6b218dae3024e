// go-tfe-smoke drives a started StackShip through go-tfe's own client: the organization,
// account and workspace-variable endpoints of issue 26, part 2. It prints one line per call and
// exits 1 at the first answer go-tfe cannot use or that is not what StackShip promises.
//
//	STACKSHIP_ADDRESS=http://127.0.0.1:8080 STACKSHIP_TOKEN=<deployment administrator token> go run .
//
// Not part of CI; see README.md next to this file.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	tfe "github.com/hashicorp/go-tfe"
)

// sensitiveCanary is a sensitive variable's value: no answer may carry it.
const sensitiveCanary = "go-tfe-smoke-canary-5f0a2c"

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("PASS: every call answered as go-tfe and StackShip expect")
}

func step(name string, format string, args ...any) {
	fmt.Printf("ok   %-28s %s\n", name, fmt.Sprintf(format, args...))
}

func run(ctx context.Context) error {
	address := envOr("STACKSHIP_ADDRESS", "http://127.0.0.1:8080")
	token := os.Getenv("STACKSHIP_TOKEN")
	if token == "" {
		return errors.New("set STACKSHIP_TOKEN to a deployment administrator token (STACKSHIP_BOOTSTRAP_TOKEN)")
	}
	client, err := tfe.NewClient(&tfe.Config{Address: address, Token: token})
	if err != nil {
		return fmt.Errorf("NewClient: %w", err)
	}
	step("NewClient", "%s (API version %s)", address, client.RemoteAPIVersion())

	me, err := client.Users.ReadCurrent(ctx)
	if err != nil {
		return fmt.Errorf("Users.ReadCurrent: %w", err)
	}
	if me.IsSiteAdmin == nil || !*me.IsSiteAdmin || me.Permissions == nil || !me.Permissions.CanCreateOrganizations {
		return fmt.Errorf("Users.ReadCurrent: %q is not a deployment administrator", me.Username)
	}
	step("Users.ReadCurrent", "id=%s username=%q service-account=%t", me.ID, me.Username, me.IsServiceAccount)

	name := fmt.Sprintf("smoke-%d", time.Now().Unix())
	created, err := client.Organizations.Create(ctx, tfe.OrganizationCreateOptions{Name: tfe.String(name), Email: tfe.String("smoke@example.com")})
	if err != nil {
		return fmt.Errorf("Organizations.Create: %w", err)
	}
	if created.Name != name || created.ExternalID == "" || created.CreatedAt.IsZero() || created.DefaultProject == nil {
		return fmt.Errorf("Organizations.Create: unexpected %+v", created)
	}
	step("Organizations.Create", "name=%s external-id=%s default-project=%s", created.Name, created.ExternalID, created.DefaultProject.ID)

	read, err := client.Organizations.Read(ctx, name)
	if err != nil {
		return fmt.Errorf("Organizations.Read: %w", err)
	}
	if read.ExternalID != created.ExternalID || read.Permissions == nil || !read.Permissions.CanCreateWorkspace {
		return fmt.Errorf("Organizations.Read: unexpected %+v", read)
	}
	step("Organizations.Read", "name=%s created-at=%s can-create-workspace=%t", read.Name, read.CreatedAt.Format(time.RFC3339), read.Permissions.CanCreateWorkspace)

	list, err := client.Organizations.List(ctx, &tfe.OrganizationListOptions{Query: name})
	if err != nil {
		return fmt.Errorf("Organizations.List: %w", err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != name || list.Pagination == nil || list.Pagination.TotalCount != 1 {
		return fmt.Errorf("Organizations.List(q=%s): %d items", name, len(list.Items))
	}
	step("Organizations.List", "q=%s -> %d of %d", name, len(list.Items), list.Pagination.TotalCount)

	workspace, err := client.Workspaces.Create(ctx, name, tfe.WorkspaceCreateOptions{Name: tfe.String("vars")})
	if err != nil {
		return fmt.Errorf("Workspaces.Create: %w", err)
	}
	step("Workspaces.Create", "id=%s", workspace.ID)

	plain, err := client.Variables.Create(ctx, workspace.ID, tfe.VariableCreateOptions{
		Key: tfe.String("region"), Value: tfe.String("eu-west-1"), Description: tfe.String("where"), Category: tfe.Category(tfe.CategoryTerraform), HCL: tfe.Bool(false), Sensitive: tfe.Bool(false),
	})
	if err != nil {
		return fmt.Errorf("Variables.Create(plain): %w", err)
	}
	if plain.Value != "eu-west-1" || plain.Workspace == nil || plain.Workspace.ID != workspace.ID {
		return fmt.Errorf("Variables.Create(plain): unexpected %+v", plain)
	}
	step("Variables.Create", "id=%s key=%s value=%q configurable=%s", plain.ID, plain.Key, plain.Value, plain.Workspace.ID)

	secret, err := client.Variables.Create(ctx, workspace.ID, tfe.VariableCreateOptions{
		Key: tfe.String("DB_PASSWORD"), Value: tfe.String(sensitiveCanary), Category: tfe.Category(tfe.CategoryEnv), Sensitive: tfe.Bool(true),
	})
	if err != nil {
		return fmt.Errorf("Variables.Create(sensitive): %w", err)
	}
	if secret.Value != "" || !secret.Sensitive {
		return fmt.Errorf("Variables.Create(sensitive): value shown or not sensitive: %+v", secret)
	}
	step("Variables.Create", "id=%s key=%s sensitive=%t value=%q", secret.ID, secret.Key, secret.Sensitive, secret.Value)

	updated, err := client.Variables.Update(ctx, workspace.ID, plain.ID, tfe.VariableUpdateOptions{Value: tfe.String("us-east-1"), Description: tfe.String("moved")})
	if err != nil {
		return fmt.Errorf("Variables.Update: %w", err)
	}
	if updated.Value != "us-east-1" || updated.Description != "moved" || updated.Key != "region" {
		return fmt.Errorf("Variables.Update: unexpected %+v", updated)
	}
	step("Variables.Update", "id=%s value=%q description=%q", updated.ID, updated.Value, updated.Description)

	again, err := client.Variables.Read(ctx, workspace.ID, secret.ID)
	if err != nil {
		return fmt.Errorf("Variables.Read: %w", err)
	}
	if again.Value != "" {
		return errors.New("Variables.Read: the sensitive value was returned")
	}
	step("Variables.Read", "id=%s value=%q", again.ID, again.Value)

	vars, err := client.Variables.List(ctx, workspace.ID, nil)
	if err != nil {
		return fmt.Errorf("Variables.List: %w", err)
	}
	var keys []string
	for _, v := range vars.Items {
		if strings.Contains(v.Value, sensitiveCanary) {
			return errors.New("Variables.List: the sensitive value was returned")
		}
		keys = append(keys, fmt.Sprintf("%s/%s", v.Category, v.Key))
	}
	if len(vars.Items) != 2 {
		return fmt.Errorf("Variables.List: %d items, want 2", len(vars.Items))
	}
	step("Variables.List", "%s", strings.Join(keys, ", "))

	for _, v := range []*tfe.Variable{plain, secret} {
		if err := client.Variables.Delete(ctx, workspace.ID, v.ID); err != nil {
			return fmt.Errorf("Variables.Delete(%s): %w", v.ID, err)
		}
	}
	after, err := client.Variables.List(ctx, workspace.ID, nil)
	if err != nil {
		return fmt.Errorf("Variables.List after delete: %w", err)
	}
	if len(after.Items) != 0 {
		return fmt.Errorf("Variables.Delete: %d variables left", len(after.Items))
	}
	step("Variables.Delete", "both deleted; list now empty")

	if _, err := client.Variables.Read(ctx, workspace.ID, plain.ID); !errors.Is(err, tfe.ErrResourceNotFound) {
		return fmt.Errorf("Variables.Read after delete: want ErrResourceNotFound, got %v", err)
	}
	step("Variables.Read (deleted)", "ErrResourceNotFound")
	return nil
}

func envOr(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}
