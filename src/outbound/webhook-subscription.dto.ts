import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayUnique, IsArray, IsBoolean, IsIn, IsString, Matches, MaxLength } from 'class-validator';
import { PageMetaDto, PageQueryDto } from '../common/pagination';
import { trim, OptionalNonNull } from '../common/validation';
import { GATEWAY_EVENT_TYPES } from './gateway-events';
import { MAX_URL_LENGTH, SUBSCRIPTION_URL_PATTERN } from './subscription-url';

/** Body of POST /v1/webhook-subscriptions. */
export class CreateWebhookSubscriptionDto {
  @ApiProperty({
    example: 'https://app.example.com/hooks/wallet',
    format: 'uri',
    maxLength: MAX_URL_LENGTH,
    description:
      'Where events are POSTed: an absolute https URL, without credentials or a fragment; plain http only ' +
      'outside production and only to loopback or private hosts (400 otherwise). A well-formed URL whose ' +
      'host does not resolve, or is or resolves to an address deliveries may not reach (loopback, private, ' +
      'link-local, metadata; private ones allowed where the deployment says so) is refused with 422 ' +
      '`business_rule_failed`.',
  })
  @Transform(trim)
  @IsString()
  @MaxLength(MAX_URL_LENGTH)
  @Matches(SUBSCRIPTION_URL_PATTERN, { message: 'url must be an absolute https URL' })
  url: string;

  @ApiPropertyOptional({
    type: [String],
    enum: GATEWAY_EVENT_TYPES,
    example: ['payout.succeeded', 'payout.failed'],
    description: 'Event types to receive; empty or absent = every event type.',
  })
  @OptionalNonNull()
  @IsArray()
  @ArrayMaxSize(GATEWAY_EVENT_TYPES.length)
  @ArrayUnique()
  @IsIn(GATEWAY_EVENT_TYPES, { each: true, message: 'eventTypes must contain only known event types' })
  eventTypes?: string[];

  @ApiPropertyOptional({ example: 'Mobile app push notifications', maxLength: 200 })
  @OptionalNonNull()
  @Transform(trim)
  @IsString()
  @MaxLength(200)
  description?: string;
}

/** A subscription as the gateway answers it (the secret is shown only once, at creation). */
export class WebhookSubscriptionDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'https://app.example.com/hooks/wallet' }) url: string;
  @ApiProperty({
    type: [String],
    enum: GATEWAY_EVENT_TYPES,
    example: ['payout.succeeded'],
    description: 'Event types delivered; empty = every event type.',
  })
  eventTypes: string[];
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ example: true, description: 'False once deleted (disabled).' }) active: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({ type: String, nullable: true, format: 'date-time', description: 'When it was deleted.' })
  disabledAt: string | null;
}

/** Answer of POST /v1/webhook-subscriptions: the subscription with its signing secret, shown this once. */
export class CreatedWebhookSubscriptionDto extends WebhookSubscriptionDto {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=',
    description:
      'Standard Webhooks signing secret (`whsec_` + base64 of 32 random bytes). Shown only in this answer: store it.',
  })
  secret: string;
}

/** A page of subscriptions. */
export class WebhookSubscriptionPageDto extends PageMetaDto {
  @ApiProperty({ type: [WebhookSubscriptionDto] }) data: WebhookSubscriptionDto[];
}

/** Query of GET /v1/webhook-subscriptions. */
export class ListWebhookSubscriptionsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ type: Boolean, default: false, description: 'Include deleted (disabled) subscriptions.' })
  @OptionalNonNull()
  @Transform(({ value }: { value: unknown }) => (value === 'true' ? true : value === 'false' ? false : value))
  @IsBoolean()
  includeDisabled?: boolean;
}

export const OUTBOX_MESSAGE_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type OutboxMessageStatus = (typeof OUTBOX_MESSAGE_STATUSES)[number];

/** Query of GET /v1/webhook-subscriptions/{id}/messages. */
export class ListOutboxMessagesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: OUTBOX_MESSAGE_STATUSES })
  @OptionalNonNull()
  @IsIn(OUTBOX_MESSAGE_STATUSES)
  status?: OutboxMessageStatus;
}

/** The event body delivered: `{type, timestamp, data}`. */
export class GatewayEventDto {
  @ApiProperty({ enum: GATEWAY_EVENT_TYPES, example: 'payout.succeeded' }) type: string;
  @ApiProperty({ format: 'date-time', description: 'When the event happened.' }) timestamp: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'For ledger events, the transaction: id, kind, direction, status, amount and fee (integers in minor units ' +
      'of currency), currency, reference, customerId, beneficiaryId, cardId, failureReason, createdAt, completedAt.',
  })
  data: Record<string, unknown>;
}

/** One outbox message: one event for one subscription, and how its delivery went. */
export class OutboxMessageDto {
  @ApiProperty({ format: 'uuid', description: 'Also the `webhook-id` header of every attempt.' }) id: string;
  @ApiProperty({ format: 'uuid' }) subscriptionId: string;
  @ApiProperty({ enum: GATEWAY_EVENT_TYPES, example: 'payout.succeeded' }) eventType: string;
  @ApiProperty({ enum: OUTBOX_MESSAGE_STATUSES, example: 'delivered' }) status: string;
  @ApiProperty({ type: 'integer', minimum: 0, example: 1, description: 'Delivery attempts made so far.' })
  attempts: number;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'When the next attempt is due (pending messages only).',
  })
  nextAttemptAt: string | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 200,
    description: "HTTP status of the receiver's last answer.",
  })
  lastStatusCode: number | null;
  @ApiProperty({ type: String, nullable: true, example: 'receiver answered HTTP 500' }) lastError: string | null;
  @ApiProperty({ type: GatewayEventDto }) payload: GatewayEventDto;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, nullable: true, format: 'date-time' }) deliveredAt: string | null;
}

/** A page of outbox messages, newest first. */
export class OutboxMessagePageDto extends PageMetaDto {
  @ApiProperty({ type: [OutboxMessageDto] }) data: OutboxMessageDto[];
}
