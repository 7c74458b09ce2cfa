// Reads [{name, text}] as JSON on stdin; prints [{name, diagnostics}] as JSON.
// Uses the Neo4j 5 catalogue of functions and procedures the package ships
// (testData.mockSchema), so anything Neo4j lacks is reported as an error.
import { lintCypherQuery, testData } from '@neo4j-cypher/language-support';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const statements = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const schema = testData.mockSchema;
const results = statements.map(({ name, text }) => {
  const { diagnostics } = lintCypherQuery(text, schema);
  return {
    name,
    diagnostics: diagnostics.map((d) => ({
      severity: d.severity === 1 ? 'error' : d.severity === 2 ? 'warning' : 'info',
      message: d.message,
      line: d.range?.start?.line,
    })),
  };
});
process.stdout.write(JSON.stringify(results));
