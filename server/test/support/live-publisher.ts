// A stand-in for a runner in another process: `node --import tsx live-publisher.ts <database url> <run id> <chunks>`
// appends log chunks through LogRepository.append (the runner's path) on its own connection, then exits.
import { createStores, openDatabase } from "../../src/store/index.ts";

const [url, runId, count] = process.argv.slice(2);
const db = await openDatabase(url);
try {
  const stores = createStores(db.knex, db.dialect);
  for (let i = 0; i < Number(count); i++)
    await stores.logs.append(runId, "policy", `from another process ${i}\n`, i === Number(count) - 1, new Date());
} finally {
  await db.close();
}
