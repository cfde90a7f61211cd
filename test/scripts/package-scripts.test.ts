import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { SERVICE_NODE_FLAGS } from '../../scripts/bench-support.js';

describe('package.json scripts', () => {
  const scripts = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> }).scripts;

  it('start the service with the node flags the benchmarks start it with', () => {
    for (const name of ['start', 'rebuild']) {
      for (const flag of SERVICE_NODE_FLAGS) expect(scripts[name], name).to.contain(` ${flag} `);
    }
  });

  it('the container image starts the service with them too', () => {
    const dockerfile = readFileSync(new URL('../../deploy/Dockerfile', import.meta.url), 'utf8');
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
    expect(cmd, 'CMD of deploy/Dockerfile').to.not.equal(null);
    const argv = JSON.parse(cmd![1]!) as string[];
    expect(argv.slice(0, 1 + SERVICE_NODE_FLAGS.length)).to.deep.equal(['node', ...SERVICE_NODE_FLAGS]);
  });
});
