/** `npm run idp`: the local OpenID provider alone (DEVELOPMENT ONLY; `npm start` runs it too). */
import { devIdpBanner } from './banner';
import { startDevIdp } from './dev';

startDevIdp()
  .then((idp) => {
    process.stdout.write(
      `${devIdpBanner(idp.issuer, process.env.PUBLIC_BASE_URL ?? 'http://127.0.0.1:3000').join('\n')}\n`,
    );
    const stop = () => void idp.stop().then(() => process.exit(0));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  })
  .catch((error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
