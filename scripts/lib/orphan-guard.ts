/**
 * Preloaded (`node --require`) by `npm start` into the gateway and the simulator it runs: when the
 * launcher that started the process is gone (killed outright, so it could not stop its children),
 * the process is sent SIGTERM, its own graceful stop, instead of running on with nobody to stop it.
 * Checks its parent once a second (NPM_START_LAUNCHER_PID names the launcher); holds nothing that
 * keeps the process alive.
 */
// The launcher's pid as it gave it (it may be gone before this runs), else the parent now.
const launcher = Number(process.env.NPM_START_LAUNCHER_PID) || process.ppid;
const watch = setInterval(() => {
  if (process.ppid === launcher) return;
  clearInterval(watch);
  process.kill(process.pid, 'SIGTERM');
}, 1000);
watch.unref();
