// The program git's pre-receive hook runs (through $ANVIL_HOOK): it sends the pushed ref updates
// to the Anvil process that started the push and relays its verdict. Run as
// `node hook.js pre-receive`, with the updates on standard input, one "old new ref" per line.
import http from 'node:http';

async function main(): Promise<number> {
  const [kind] = process.argv.slice(2);
  const url = process.env['ANVIL_INTERNAL_URL'];
  const token = process.env['ANVIL_INTERNAL_TOKEN'];
  const pushId = process.env['ANVIL_PUSH_ID'];
  if (kind !== 'pre-receive' || !url || !token || !pushId) return 0;

  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const updates = input
    .split('\n')
    .map((l) => l.trim().split(' '))
    .filter((p) => p.length === 3)
    .map(([oldOid, newOid, ref]) => ({ oldOid, newOid, ref }));
  const body = JSON.stringify({
    pushId,
    updates,
    env: {
      GIT_OBJECT_DIRECTORY: process.env['GIT_OBJECT_DIRECTORY'],
      GIT_ALTERNATE_OBJECT_DIRECTORIES: process.env['GIT_ALTERNATE_OBJECT_DIRECTORIES'],
      GIT_QUARANTINE_PATH: process.env['GIT_QUARANTINE_PATH'],
    },
  });
  const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(
      `${url}/pre-receive`,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  let verdict: { ok?: boolean; message?: string } = {};
  try {
    verdict = JSON.parse(answer.text) as typeof verdict;
  } catch {
    // not JSON: reported below
  }
  if (answer.status === 200 && verdict.ok) return 0;
  process.stderr.write(`${verdict.message ?? `Anvil refused the push (${answer.status})`}\n`);
  return 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `Anvil could not check the push: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(1);
  },
);
