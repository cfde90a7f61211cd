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

  it('compile the service first and run the compiled entry, as the benchmarks do', () => {
    expect(scripts.start).to.match(/^node scripts\/build\.mjs && exec node .* dist\/scripts\/start\.js$/);
    expect(scripts.rebuild).to.match(/^node scripts\/build\.mjs && exec node .* dist\/scripts\/rebuild\.js$/);
    expect(scripts.start).to.not.contain('tsx');
  });

  it('the container image starts the service with them too', () => {
    const dockerfile = readFileSync(new URL('../../deploy/Dockerfile', import.meta.url), 'utf8');
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
    expect(cmd, 'CMD of deploy/Dockerfile').to.not.equal(null);
    const argv = JSON.parse(cmd![1]!) as string[];
    expect(argv).to.deep.equal(['node', ...SERVICE_NODE_FLAGS, 'dist/scripts/start.js']);
    expect(dockerfile).to.match(/^RUN node scripts\/build\.mjs$/m);
  });
});
