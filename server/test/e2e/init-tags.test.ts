import { suite } from "uvu";
import * as assert from "uvu/assert";
import { cliProject, testEachCliServer, transcript } from "./cli.ts";

const initTags = suite("tofu init with the tags strategy against StackShip");

testEachCliServer(
  initTags,
  "selects the one workspace carrying every configured tag, plans in it, and `workspace new` creates a workspace with the tags",
  async (server) => {
    const project = await cliProject(server, { tags: ["team-a", "svc"] });
    try {
      const create = (name: string, tags: string[]) =>
        fetch(`${server.baseUrl}/api/v2/organizations/${project.organizationName}/workspaces`, {
          method: "POST",
          headers: { Authorization: `Bearer ${project.token}`, "Content-Type": "application/vnd.api+json" },
          body: JSON.stringify({
            data: {
              type: "workspaces",
              attributes: { name },
              relationships: { tags: { data: tags.map((tag) => ({ type: "tags", attributes: { name: tag } })) } },
            },
          }),
        });
      assert.is((await create("app", ["svc", "team-a", "prod"])).status, 201);
      assert.is((await create("partial", ["team-a"])).status, 201);
      assert.is((await create("elsewhere", ["team-b", "svc"])).status, 201);

      const init = await project.tofu(["init", "-input=false"]);
      assert.is(init.code, 0, transcript(init));
      const shown = await project.tofu(["workspace", "show"]);
      assert.is(shown.stdout.trim(), "app", transcript(shown));

      const plan = await project.tofu(["plan"]);
      assert.is(plan.code, 0, transcript(plan));
      const app = await server.services.stores.workspaces.getByName(
        (await server.services.stores.organizations.getByName(project.organizationName))!.id,
        "app",
      );
      const runs = await server.services.stores.runs.listByWorkspace(app!.id, { limit: 10 });
      assert.is(runs.runs.length, 1);

      const created = await project.tofu(["workspace", "new", "web"]);
      assert.is(created.code, 0, transcript(created));
      const web = await server.services.stores.workspaces.getByName(app!.organizationId, "web");
      assert.ok(web, "workspace new created the workspace");
      assert.equal(await server.services.stores.workspaces.tagsOf(web.id), ["svc", "team-a"]);

      const listed = await project.tofu(["workspace", "list"]);
      assert.is(listed.code, 0, transcript(listed));
      assert.equal(
        listed.stdout
          .split("\n")
          .map((line) => line.replace("*", "").trim())
          .filter(Boolean)
          .sort(),
        ["app", "web"],
      );
    } finally {
      await project.cleanup();
    }
  },
  { runner: true },
);

initTags.run();
