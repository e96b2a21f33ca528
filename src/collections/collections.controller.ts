import { Body, Controller, Get, Param, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Audited } from '../audit/audited.decorator';
import { RequireScopes } from '../auth/auth.decorators';
import { ApiNotFound, ApiUnsettledProviderErrors, ApiValidationErrors } from '../common/api-responses';
import { Idempotent } from '../common/idempotency/idempotent.decorator';
import { ParseIdPipe } from '../common/validation';
import { CollectionDto, CollectionPageDto, CreateCollectionDto, ListCollectionsQueryDto } from './collection.dto';
import { CollectionsService } from './collections.service';

@ApiTags('collections')
@Controller('v1/collections')
export class CollectionsController {
  constructor(private readonly collections: CollectionsService) {}

  @Post()
  @Audited('collection.create', 'collection')
  @RequireScopes('collections:write')
  @Idempotent()
  @ApiOperation({
    summary: 'Start a collection: an account detail the customer pays into before it expires (status processing)',
  })
  @ApiCreatedResponse({ type: CollectionDto })
  @ApiValidationErrors()
  @ApiNotFound('customer')
  @ApiUnsettledProviderErrors(
    "`currency` is not the country's currency, or `amount` is outside the country's bounds (NG, KE and UG: see " +
      'the fields); nothing stored, the provider not called',
  )
  create(@Body() body: CreateCollectionDto): Promise<CollectionDto> {
    return this.collections.create(body);
  }

  @Get(':id')
  @RequireScopes('collections:read')
  @ApiOperation({ summary: 'Get a collection' })
  @ApiOkResponse({ type: CollectionDto })
  @ApiValidationErrors()
  @ApiNotFound('collection')
  get(@Param('id', ParseIdPipe()) id: string): Promise<CollectionDto> {
    return this.collections.get(id);
  }

  @Get()
  @RequireScopes('collections:read')
  @ApiOperation({ summary: 'List collections, newest first; filter by customer and status' })
  @ApiOkResponse({ type: CollectionPageDto })
  @ApiValidationErrors()
  list(@Query() query: ListCollectionsQueryDto): Promise<CollectionPageDto> {
    return this.collections.list(query);
  }
}
