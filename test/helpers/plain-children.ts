// Loaded into every test process (package.json's tap "node-arg"): the
// processes a test starts (the `baseplane` command line, platform processes,
// fleets) run as an operator's would, without tap's process tracker. tap's
// @tapjs/processinfo adds itself to every child's NODE_OPTIONS through
// process-on-spawn, so each child loads it and has it read every module it
// loads: 1 to 2 s more for a `baseplane --help` on two cores, and the suite
// starts some hundreds of children. It records for coverage, which the suite
// does not collect (tap's "disable-coverage").
const spawnHooks = (globalThis as Record<symbol, { listeners: unknown[] } | undefined>)[Symbol.for('process-on-spawn@*:singletonId')]
if (spawnHooks) spawnHooks.listeners.length = 0
const options = process.env.NODE_OPTIONS?.split(/\s+/).filter((option) => option && !option.includes('@tapjs/processinfo'))
if (options?.length) process.env.NODE_OPTIONS = options.join(' ')
else delete process.env.NODE_OPTIONS
