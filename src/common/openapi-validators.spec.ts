import { ParseUUIDPipe } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { UUID_PATTERN } from './openapi-validators';

describe('UUID_PATTERN (the description of a gateway id)', () => {
  const samples = [
    '3f0c2a9e-1b7d-4c5e-9a8b-0123456789ab', // v4
    '3F0C2A9E-1B7D-4C5E-9A8B-0123456789AB', // upper case
    '3f0c2a9e-1b7d-1c5e-8a8b-0123456789ab', // v1
    '3f0c2a9e-1b7d-8c5e-ba8b-0123456789ab', // v8
    '00000000-0000-0000-0000-000000000000', // nil
    'ffffffff-ffff-ffff-ffff-ffffffffffff', // max
    'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
    '3f0c2a9e-1b7d-0c5e-9a8b-0123456789ab', // version 0
    '3f0c2a9e-1b7d-9c5e-9a8b-0123456789ab', // version 9
    '3f0c2a9e-1b7d-4c5e-7a8b-0123456789ab', // another variant
    '3f0c2a9e1b7d4c5e9a8b0123456789ab', // no hyphens
    '{3f0c2a9e-1b7d-4c5e-9a8b-0123456789ab}',
    '3f0c2a9e-1b7d-4c5e-9a8b-0123456789ab ',
    '',
  ];

  it('accepts exactly what ParseIdPipe (ParseUUIDPipe) and @IsUUID() accept', () => {
    const pipe = new ParseUUIDPipe({ exceptionFactory: () => new Error('refused') });
    const pattern = new RegExp(UUID_PATTERN);
    for (const sample of samples) {
      const byPipe = (pipe as unknown as { isUUID(value: string): boolean }).isUUID(sample);
      expect({ sample, pattern: pattern.test(sample) }).toEqual({ sample, pattern: byPipe });
      expect({ sample, pattern: pattern.test(sample) }).toEqual({ sample, pattern: isUUID(sample) });
    }
  });
});
