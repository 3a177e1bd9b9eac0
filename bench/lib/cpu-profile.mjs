// Preloaded into Herald (NODE_OPTIONS=--import, where --cpu-prof is not allowed) by BURST_CPU_PROF: profiles the main
// thread from the start and writes the profile to $HERALD_CPU_PROF/herald-<pid>.cpuprofile at exit.
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';

const session = new inspector.Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 500 });
session.post('Profiler.start');
process.on('exit', () => {
  // A session of the same thread answers synchronously.
  session.post('Profiler.stop', (error, result) => {
    if (!error) fs.writeFileSync(path.join(process.env.HERALD_CPU_PROF, `herald-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
  });
});
