import { ApiProperty } from '@nestjs/swagger';
import { SCOPES } from './scopes';

/** The API client a key belongs to, as GET /v1/api-keys/me answers it. */
export class ApiKeyIdentityDto {
  @ApiProperty({ format: 'uuid', description: 'Id of the API client (the `actorId` of its moves and audit events).' })
  id: string;
  @ApiProperty({ example: 'finance', description: 'Name given to the client when its key was created.' })
  name: string;
  @ApiProperty({
    type: [String],
    enum: SCOPES,
    example: ['transactions:read'],
    description: 'The scopes the key holds: what it may call (each route names the scope it needs).',
  })
  scopes: string[];
}
