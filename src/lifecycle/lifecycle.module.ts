import { Global, Module } from '@nestjs/common';
import { ShutdownService } from './shutdown.service';

/** The instance's shutdown order (ShutdownService), available to every module. */
@Global()
@Module({ providers: [ShutdownService], exports: [ShutdownService] })
export class LifecycleModule {}
