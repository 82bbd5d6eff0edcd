/**
 * Kafka's protocol error codes by name, and the one table saying which are retriable: the same batch or
 * request may succeed if sent again (a leader moved, a coordinator is loading). Names, flags and messages are
 * those of kafkajs 2.2.4's table (Kafka's own Errors.java classification), so squeeze and the kafkajs layers it
 * uses agree; a code missing here (newer than the table) is reported as unknown and not retried.
 */
export interface KafkaErrorDefinition {
  readonly code: number
  readonly type: string
  readonly retriable: boolean
  readonly message: string
}

const TABLE = [
  { code: 0, type: 'NONE', retriable: false, message: 'No error' },
  {
    code: -1,
    type: 'UNKNOWN',
    retriable: false,
    message: 'The server experienced an unexpected error when processing the request'
  },
  {
    code: 1,
    type: 'OFFSET_OUT_OF_RANGE',
    retriable: false,
    message: 'The requested offset is not within the range of offsets maintained by the server'
  },
  {
    code: 2,
    type: 'CORRUPT_MESSAGE',
    retriable: true,
    message: 'This message has failed its CRC checksum, exceeds the valid size, or is otherwise corrupt'
  },
  {
    code: 3,
    type: 'UNKNOWN_TOPIC_OR_PARTITION',
    retriable: true,
    message: 'This server does not host this topic-partition'
  },
  { code: 4, type: 'INVALID_FETCH_SIZE', retriable: false, message: 'The requested fetch size is invalid' },
  {
    code: 5,
    type: 'LEADER_NOT_AVAILABLE',
    retriable: true,
    message: 'There is no leader for this topic-partition as we are in the middle of a leadership election'
  },
  {
    code: 6,
    type: 'NOT_LEADER_FOR_PARTITION',
    retriable: true,
    message: 'This server is not the leader for that topic-partition'
  },
  { code: 7, type: 'REQUEST_TIMED_OUT', retriable: true, message: 'The request timed out' },
  { code: 8, type: 'BROKER_NOT_AVAILABLE', retriable: false, message: 'The broker is not available' },
  {
    code: 9,
    type: 'REPLICA_NOT_AVAILABLE',
    retriable: true,
    message: 'The replica is not available for the requested topic-partition'
  },
  {
    code: 10,
    type: 'MESSAGE_TOO_LARGE',
    retriable: false,
    message: 'The request included a message larger than the max message size the server will accept'
  },
  { code: 11, type: 'STALE_CONTROLLER_EPOCH', retriable: false, message: 'The controller moved to another broker' },
  {
    code: 12,
    type: 'OFFSET_METADATA_TOO_LARGE',
    retriable: false,
    message: 'The metadata field of the offset request was too large'
  },
  {
    code: 13,
    type: 'NETWORK_EXCEPTION',
    retriable: true,
    message: 'The server disconnected before a response was received'
  },
  {
    code: 14,
    type: 'GROUP_LOAD_IN_PROGRESS',
    retriable: true,
    message: "The coordinator is loading and hence can't process requests for this group"
  },
  {
    code: 15,
    type: 'GROUP_COORDINATOR_NOT_AVAILABLE',
    retriable: true,
    message: 'The group coordinator is not available'
  },
  {
    code: 16,
    type: 'NOT_COORDINATOR_FOR_GROUP',
    retriable: true,
    message: 'This is not the correct coordinator for this group'
  },
  {
    code: 17,
    type: 'INVALID_TOPIC_EXCEPTION',
    retriable: false,
    message: 'The request attempted to perform an operation on an invalid topic'
  },
  {
    code: 18,
    type: 'RECORD_LIST_TOO_LARGE',
    retriable: false,
    message: 'The request included message batch larger than the configured segment size on the server'
  },
  {
    code: 19,
    type: 'NOT_ENOUGH_REPLICAS',
    retriable: true,
    message: 'Messages are rejected since there are fewer in-sync replicas than required'
  },
  {
    code: 20,
    type: 'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
    retriable: true,
    message: 'Messages are written to the log, but to fewer in-sync replicas than required'
  },
  {
    code: 21,
    type: 'INVALID_REQUIRED_ACKS',
    retriable: false,
    message: 'Produce request specified an invalid value for required acks'
  },
  { code: 22, type: 'ILLEGAL_GENERATION', retriable: false, message: 'Specified group generation id is not valid' },
  {
    code: 23,
    type: 'INCONSISTENT_GROUP_PROTOCOL',
    retriable: false,
    message: "The group member's supported protocols are incompatible with those of existing members"
  },
  { code: 24, type: 'INVALID_GROUP_ID', retriable: false, message: 'The configured groupId is invalid' },
  { code: 25, type: 'UNKNOWN_MEMBER_ID', retriable: false, message: 'The coordinator is not aware of this member' },
  {
    code: 26,
    type: 'INVALID_SESSION_TIMEOUT',
    retriable: false,
    message:
      'The session timeout is not within the range allowed by the broker (as configured by group.min.session.timeout.ms and group.max.session.timeout.ms)'
  },
  {
    code: 27,
    type: 'REBALANCE_IN_PROGRESS',
    retriable: false,
    message: 'The group is rebalancing, so a rejoin is needed'
  },
  {
    code: 28,
    type: 'INVALID_COMMIT_OFFSET_SIZE',
    retriable: false,
    message: 'The committing offset data size is not valid'
  },
  {
    code: 29,
    type: 'TOPIC_AUTHORIZATION_FAILED',
    retriable: false,
    message: 'Not authorized to access topics: [Topic authorization failed]'
  },
  {
    code: 30,
    type: 'GROUP_AUTHORIZATION_FAILED',
    retriable: false,
    message: 'Not authorized to access group: Group authorization failed'
  },
  { code: 31, type: 'CLUSTER_AUTHORIZATION_FAILED', retriable: false, message: 'Cluster authorization failed' },
  {
    code: 32,
    type: 'INVALID_TIMESTAMP',
    retriable: false,
    message: 'The timestamp of the message is out of acceptable range'
  },
  {
    code: 33,
    type: 'UNSUPPORTED_SASL_MECHANISM',
    retriable: false,
    message: 'The broker does not support the requested SASL mechanism'
  },
  {
    code: 34,
    type: 'ILLEGAL_SASL_STATE',
    retriable: false,
    message: 'Request is not valid given the current SASL state'
  },
  { code: 35, type: 'UNSUPPORTED_VERSION', retriable: false, message: 'The version of API is not supported' },
  { code: 36, type: 'TOPIC_ALREADY_EXISTS', retriable: false, message: 'Topic with this name already exists' },
  { code: 37, type: 'INVALID_PARTITIONS', retriable: false, message: 'Number of partitions is invalid' },
  { code: 38, type: 'INVALID_REPLICATION_FACTOR', retriable: false, message: 'Replication-factor is invalid' },
  { code: 39, type: 'INVALID_REPLICA_ASSIGNMENT', retriable: false, message: 'Replica assignment is invalid' },
  { code: 40, type: 'INVALID_CONFIG', retriable: false, message: 'Configuration is invalid' },
  { code: 41, type: 'NOT_CONTROLLER', retriable: true, message: 'This is not the correct controller for this cluster' },
  {
    code: 42,
    type: 'INVALID_REQUEST',
    retriable: false,
    message:
      'This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details'
  },
  {
    code: 43,
    type: 'UNSUPPORTED_FOR_MESSAGE_FORMAT',
    retriable: false,
    message: 'The message format version on the broker does not support the request'
  },
  {
    code: 44,
    type: 'POLICY_VIOLATION',
    retriable: false,
    message: 'Request parameters do not satisfy the configured policy'
  },
  {
    code: 45,
    type: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
    retriable: false,
    message: 'The broker received an out of order sequence number'
  },
  {
    code: 46,
    type: 'DUPLICATE_SEQUENCE_NUMBER',
    retriable: false,
    message: 'The broker received a duplicate sequence number'
  },
  {
    code: 47,
    type: 'INVALID_PRODUCER_EPOCH',
    retriable: false,
    message:
      "Producer attempted an operation with an old epoch. Either there is a newer producer with the same transactionalId, or the producer's transaction has been expired by the broker"
  },
  {
    code: 48,
    type: 'INVALID_TXN_STATE',
    retriable: false,
    message: 'The producer attempted a transactional operation in an invalid state'
  },
  {
    code: 49,
    type: 'INVALID_PRODUCER_ID_MAPPING',
    retriable: false,
    message: 'The producer attempted to use a producer id which is not currently assigned to its transactional id'
  },
  {
    code: 50,
    type: 'INVALID_TRANSACTION_TIMEOUT',
    retriable: false,
    message:
      'The transaction timeout is larger than the maximum value allowed by the broker (as configured by max.transaction.timeout.ms)'
  },
  {
    code: 51,
    type: 'CONCURRENT_TRANSACTIONS',
    retriable: true,
    message:
      'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing'
  },
  {
    code: 52,
    type: 'TRANSACTION_COORDINATOR_FENCED',
    retriable: false,
    message:
      'Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for a given producer'
  },
  {
    code: 53,
    type: 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
    retriable: false,
    message: 'Transactional Id authorization failed'
  },
  { code: 54, type: 'SECURITY_DISABLED', retriable: false, message: 'Security features are disabled' },
  {
    code: 55,
    type: 'OPERATION_NOT_ATTEMPTED',
    retriable: false,
    message:
      'The broker did not attempt to execute this operation. This may happen for batched RPCs where some operations in the batch failed, causing the broker to respond without trying the rest'
  },
  {
    code: 56,
    type: 'KAFKA_STORAGE_ERROR',
    retriable: true,
    message: 'Disk error when trying to access log file on the disk'
  },
  {
    code: 57,
    type: 'LOG_DIR_NOT_FOUND',
    retriable: false,
    message: 'The user-specified log directory is not found in the broker config'
  },
  { code: 58, type: 'SASL_AUTHENTICATION_FAILED', retriable: false, message: 'SASL Authentication failed' },
  {
    code: 59,
    type: 'UNKNOWN_PRODUCER_ID',
    retriable: false,
    message:
      "This exception is raised by the broker if it could not locate the producer metadata associated with the producerId in question. This could happen if, for instance, the producer's records were deleted because their retention time had elapsed. Once the last records of the producerId are removed, the producer's metadata is removed from the broker, and future appends by the producer will return this exception"
  },
  { code: 60, type: 'REASSIGNMENT_IN_PROGRESS', retriable: false, message: 'A partition reassignment is in progress' },
  {
    code: 61,
    type: 'DELEGATION_TOKEN_AUTH_DISABLED',
    retriable: false,
    message: 'Delegation Token feature is not enabled'
  },
  {
    code: 62,
    type: 'DELEGATION_TOKEN_NOT_FOUND',
    retriable: false,
    message: 'Delegation Token is not found on server'
  },
  {
    code: 63,
    type: 'DELEGATION_TOKEN_OWNER_MISMATCH',
    retriable: false,
    message: 'Specified Principal is not valid Owner/Renewer'
  },
  {
    code: 64,
    type: 'DELEGATION_TOKEN_REQUEST_NOT_ALLOWED',
    retriable: false,
    message:
      'Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels'
  },
  {
    code: 65,
    type: 'DELEGATION_TOKEN_AUTHORIZATION_FAILED',
    retriable: false,
    message: 'Delegation Token authorization failed'
  },
  { code: 66, type: 'DELEGATION_TOKEN_EXPIRED', retriable: false, message: 'Delegation Token is expired' },
  { code: 67, type: 'INVALID_PRINCIPAL_TYPE', retriable: false, message: 'Supplied principalType is not supported' },
  { code: 68, type: 'NON_EMPTY_GROUP', retriable: false, message: 'The group is not empty' },
  { code: 69, type: 'GROUP_ID_NOT_FOUND', retriable: false, message: 'The group id was not found' },
  { code: 70, type: 'FETCH_SESSION_ID_NOT_FOUND', retriable: true, message: 'The fetch session ID was not found' },
  { code: 71, type: 'INVALID_FETCH_SESSION_EPOCH', retriable: true, message: 'The fetch session epoch is invalid' },
  {
    code: 72,
    type: 'LISTENER_NOT_FOUND',
    retriable: true,
    message:
      'There is no listener on the leader broker that matches the listener on which metadata request was processed'
  },
  { code: 73, type: 'TOPIC_DELETION_DISABLED', retriable: false, message: 'Topic deletion is disabled' },
  {
    code: 74,
    type: 'FENCED_LEADER_EPOCH',
    retriable: true,
    message: 'The leader epoch in the request is older than the epoch on the broker'
  },
  {
    code: 75,
    type: 'UNKNOWN_LEADER_EPOCH',
    retriable: true,
    message: 'The leader epoch in the request is newer than the epoch on the broker'
  },
  {
    code: 76,
    type: 'UNSUPPORTED_COMPRESSION_TYPE',
    retriable: false,
    message: 'The requesting client does not support the compression type of given partition'
  },
  { code: 77, type: 'STALE_BROKER_EPOCH', retriable: false, message: 'Broker epoch has changed' },
  {
    code: 78,
    type: 'OFFSET_NOT_AVAILABLE',
    retriable: true,
    message:
      'The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed to be monotonically increasing'
  },
  {
    code: 79,
    type: 'MEMBER_ID_REQUIRED',
    retriable: false,
    message: 'The group member needs to have a valid member id before actually entering a consumer group'
  },
  {
    code: 80,
    type: 'PREFERRED_LEADER_NOT_AVAILABLE',
    retriable: true,
    message: 'The preferred leader was not available'
  },
  {
    code: 81,
    type: 'GROUP_MAX_SIZE_REACHED',
    retriable: false,
    message: 'The consumer group has reached its max size. It already has the configured maximum number of members'
  },
  {
    code: 82,
    type: 'FENCED_INSTANCE_ID',
    retriable: false,
    message:
      'The broker rejected this static consumer since another consumer with the same group instance id has registered with a different member id'
  },
  {
    code: 83,
    type: 'ELIGIBLE_LEADERS_NOT_AVAILABLE',
    retriable: true,
    message: 'Eligible topic partition leaders are not available'
  },
  { code: 84, type: 'ELECTION_NOT_NEEDED', retriable: true, message: 'Leader election not needed for topic partition' },
  {
    code: 85,
    type: 'NO_REASSIGNMENT_IN_PROGRESS',
    retriable: false,
    message: 'No partition reassignment is in progress'
  },
  {
    code: 86,
    type: 'GROUP_SUBSCRIBED_TO_TOPIC',
    retriable: false,
    message: 'Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it'
  },
  {
    code: 87,
    type: 'INVALID_RECORD',
    retriable: false,
    message: 'This record has failed the validation on broker and hence be rejected'
  },
  {
    code: 88,
    type: 'UNSTABLE_OFFSET_COMMIT',
    retriable: true,
    message: 'There are unstable offsets that need to be cleared'
  },
  // Newer than kafkajs's table: the new consumer group protocol's (KIP-848), as Kafka's Errors.java has them.
  {
    code: 110,
    type: 'FENCED_MEMBER_EPOCH',
    retriable: false,
    message:
      'The member epoch is fenced by the group coordinator. The member must abandon all its partitions and rejoin'
  },
  {
    code: 111,
    type: 'UNRELEASED_INSTANCE_ID',
    retriable: false,
    message: 'The instance ID is still used by another member in the consumer group'
  },
  {
    code: 112,
    type: 'UNSUPPORTED_ASSIGNOR',
    retriable: false,
    message: 'The assignor or its version range is not supported by the consumer group'
  },
  {
    code: 113,
    type: 'STALE_MEMBER_EPOCH',
    retriable: false,
    message:
      'The member epoch is stale. The member must retry after receiving its updated member epoch via the ConsumerGroupHeartbeat API'
  }
] as const satisfies readonly KafkaErrorDefinition[]

type Row = (typeof TABLE)[number]

/** Error codes by Kafka's name: `KafkaErrorCode.DUPLICATE_SEQUENCE_NUMBER` rather than a bare 46. */
export const KafkaErrorCode = Object.freeze(Object.fromEntries(TABLE.map((row) => [row.type, row.code]))) as {
  readonly [R in Row as R['type']]: R['code']
}

const BY_CODE = new Map<number, KafkaErrorDefinition>(TABLE.map((row) => [row.code, row]))

export function kafkaError(code: number): KafkaErrorDefinition {
  return BY_CODE.get(code) ?? { type: 'UNKNOWN', code, retriable: false, message: `unknown Kafka error code ${code}` }
}

export function isRetriableKafkaError(code: number): boolean {
  return kafkaError(code).retriable
}

/** `TYPE: message`, for logs and error messages. */
export function describeKafkaError(code: number): string {
  const definition = kafkaError(code)
  return `${definition.type}: ${definition.message}`
}
