// Records @agentv/core's own scores for the tool-trajectory graders of an agentv eval file
// whose tests carry recorded agent runs (`output` messages with toolCalls): the file is
// loaded with agentv's own loader (loadTests: its parsing, skipping and defaults), each
// tool-trajectory grader built as agentv builds it and run on the test's output, negated
// as agentv negates. Prints {test: {grader name: score}} as JSON.
//
//   (cd /tmp/agv && npm install @agentv/core@4.42.4)
//   AGENTV_CORE=/tmp/agv/node_modules/@agentv/core node scripts/difftest/agentv-tools.mjs \
//     tests/fixtures/agentv_tools/trajectory.eval.yaml > tests/fixtures/agentv_tools/agentv-scores.json
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

const home = process.env.AGENTV_CORE ?? path.join(process.cwd(), "node_modules/@agentv/core");
const core = await import(pathToFileURL(path.join(home, "dist/index.js")).href);
const { loadTests, parseYamlValue, ToolTrajectoryGrader, negateScore } = core;

const file = path.resolve(process.argv[2]);
const tests = await loadTests(file, path.dirname(file));
const raw = parseYamlValue(await readFile(file, "utf8"));
const outputs = Object.fromEntries((raw.tests ?? []).map((t) => [t.id, t.output]));

const scores = {};
for (const test of tests) {
  const output = outputs[test.id];
  scores[test.id] = {};
  for (const config of test.assertions ?? []) {
    if (config.type !== "tool-trajectory") continue;
    let result = new ToolTrajectoryGrader({ config }).evaluate({ output });
    if (config.negate === true) result = negateScore(result);
    scores[test.id][config.name] = result.score;
  }
}
console.log(JSON.stringify({ agentv_core: "4.42.4", scores }, null, 2));
