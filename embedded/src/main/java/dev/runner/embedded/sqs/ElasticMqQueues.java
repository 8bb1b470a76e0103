package dev.runner.embedded.sqs;

import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.pattern.Patterns;
import org.elasticmq.BinaryMessageAttribute;
import org.elasticmq.DefaultVisibilityTimeout$;
import org.elasticmq.DeliveryReceipt;
import org.elasticmq.ElasticMQError;
import org.elasticmq.ImmediateNextDelivery$;
import org.elasticmq.Limits;
import org.elasticmq.StrictSQSLimits$;
import org.elasticmq.AfterMillisNextDelivery;
import org.elasticmq.MessageAttribute;
import org.elasticmq.MessageContent;
import org.elasticmq.MessageData;
import org.elasticmq.MillisVisibilityTimeout;
import org.elasticmq.NewMessageData;
import org.elasticmq.NextDelivery;
import org.elasticmq.NumberMessageAttribute;
import org.elasticmq.OnDateTimeReceived;
import org.elasticmq.StringMessageAttribute;
import org.elasticmq.VisibilityTimeout;
import org.elasticmq.msg.DeleteMessage;
import org.elasticmq.msg.LookupQueue;
import org.elasticmq.msg.ReceiveMessages;
import org.elasticmq.msg.SendMessage;
import org.elasticmq.msg.UpdateVisibilityTimeout;
import org.elasticmq.rest.sqs.MD5Util$;
import org.elasticmq.rest.sqs.SQSException;
import scala.Option;
import scala.util.Either;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * ElasticMQ's queues reached in-process, through the actors its REST server asks: what the local
 * runtime's event source mappings and the SQS front end ({@link SqsFrontEnd}) use instead of
 * HTTP. What a queue does (visibility, delays, receive counts, redrive to a dead-letter queue, long
 * polls woken by a send) is ElasticMQ's own; this class only translates, as ElasticMQ's REST
 * directives do (ReceiveMessageDirectives, SendMessageDirectives), without their per-request
 * HTTP, routing and JSON cost.
 */
public final class ElasticMqQueues {

    /** Longer than SQS's longest long poll (20 s), as ElasticMQ's own REST layer waits (21 s). */
    private static final Duration ASK_TIMEOUT = Duration.ofSeconds(25);
    /** The system attributes "All" stands for, as ElasticMQ lists them. */
    public static final List<String> ALL_ATTRIBUTES = List.of("SentTimestamp", "ApproximateReceiveCount",
            "ApproximateFirstReceiveTimestamp", "SenderId", "MessageDeduplicationId", "MessageGroupId", "AWSTraceHeader",
            "SequenceNumber", "DeadLetterQueueSourceArn");

    /** A message attribute as SQS shows it: {@code DataType} and a string or binary value. */
    public record Attribute(String dataType, String stringValue, byte[] binaryValue) {}

    /** A received message as SQS's ReceiveMessage answers it. */
    public record Received(String messageId, String receiptHandle, String body, String md5OfBody,
                           Map<String, String> attributes, Map<String, Attribute> messageAttributes, String md5OfMessageAttributes) {}

    /** A sent message: its id and the MD5 of its body, as SendMessage answers. */
    public record Sent(String messageId, String md5OfBody) {}

    /** What ElasticMQ refused, with SQS's error code and message. */
    public record Refusal(String code, String message) {}

    /** The queue does not exist (SQS: QueueDoesNotExist); the caller lets ElasticMQ's REST layer say so. */
    public static final class NoSuchQueue extends RuntimeException {
        public NoSuchQueue(String queueName) {
            super("no queue " + queueName);
        }
    }

    private final ActorRef queueManager;
    private final String region;
    private final String accountId;

    public ElasticMqQueues(ActorRef queueManager, String region, String accountId) {
        this.queueManager = queueManager;
        this.region = region;
        this.accountId = accountId;
    }

    /** The queue's name in a queue URL (its last path segment), as ElasticMQ reads it. */
    public static String queueName(String queueUrl) {
        String path = queueUrl.endsWith("/") ? queueUrl.substring(0, queueUrl.length() - 1) : queueUrl;
        return path.substring(path.lastIndexOf('/') + 1);
    }

    /** A queue, looked up now: one lookup serves a whole request. */
    public Queue queue(String queueName) {
        // Looked up per request, as ElasticMQ's REST layer does: a queue deleted and created again is a new actor.
        Option<ActorRef> actor = ask(queueManager, new LookupQueue(queueName));
        if (actor.isEmpty()) {
            throw new NoSuchQueue(queueName);
        }
        return new Queue(actor.get());
    }

    /** One queue's operations, as SQS names them. */
    public final class Queue {
        private final ActorRef actor;

        private Queue(ActorRef actor) {
            this.actor = actor;
        }

        /**
         * ReceiveMessage. {@code waitSeconds} null = the queue's ReceiveMessageWaitTimeSeconds,
         * {@code visibilitySeconds} null = the queue's VisibilityTimeout.
         */
        public List<Received> receive(int max, Integer waitSeconds, Integer visibilitySeconds,
                                      Collection<String> attributeNames, Collection<String> messageAttributeNames) {
            VisibilityTimeout visibility = visibilitySeconds == null ? DefaultVisibilityTimeout$.MODULE$
                    : MillisVisibilityTimeout.fromSeconds(visibilitySeconds);
            Option<Duration> wait = waitSeconds == null ? Option.empty() : Option.apply(Duration.ofSeconds(waitSeconds));
            scala.collection.immutable.List<MessageData> messages = ask(actor, new ReceiveMessages(visibility, max, wait, Option.empty()));
            List<String> names = expandAll(attributeNames);
            List<Received> received = new ArrayList<>(messages.size());
            messages.foreach(message -> received.add(received(message, names, messageAttributeNames)));
            return received;
        }

        /** SendMessage of a body with no attributes; {@code delaySeconds} null = the queue's DelaySeconds. */
        public CompletableFuture<Sent> send(String body, Integer delaySeconds, String groupId, int orderIndex) {
            NextDelivery delivery = delaySeconds == null ? ImmediateNextDelivery$.MODULE$ : new AfterMillisNextDelivery(delaySeconds * 1000L);
            var message = new NewMessageData(Option.empty(), new MessageContent(body), scala.collection.immutable.Map$.MODULE$.empty(),
                    delivery, Option.apply(groupId), Option.empty(), orderIndex, Option.empty(), Option.empty(), Option.empty());
            String md5 = md5Hex(body);
            return Patterns.ask(actor, new SendMessage(message), ASK_TIMEOUT).toCompletableFuture()
                    .thenApply(sent -> new Sent(((MessageData) sent).id().id(), md5));
        }

        /** DeleteMessage; empty when deleted, else why not (SQS's code and message). */
        public CompletableFuture<Optional<Refusal>> delete(String receiptHandle) {
            return Patterns.ask(actor, new DeleteMessage(new DeliveryReceipt(receiptHandle)), ASK_TIMEOUT)
                    .toCompletableFuture().thenApply(ElasticMqQueues::refusal);
        }

        /** ChangeMessageVisibility; empty when changed, else why not. */
        public CompletableFuture<Optional<Refusal>> changeVisibility(String receiptHandle, long seconds) {
            return Patterns.ask(actor, new UpdateVisibilityTimeout(new DeliveryReceipt(receiptHandle),
                            MillisVisibilityTimeout.fromSeconds(seconds)), ASK_TIMEOUT)
                    .toCompletableFuture().thenApply(ElasticMqQueues::refusal);
        }
    }

    /** The MD5 of a body's UTF-8 bytes in hex, as SQS answers it (ElasticMQ's MD5Util formats each byte with String.format). */
    public static String md5Hex(String body) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(body.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no MD5 in this JVM", e);
        }
    }

    /**
     * Whether ElasticMQ's strict limits take this body (Limits.verifyMessageBody): not empty, only
     * the characters SQS allows (#x9, #xA, #xD, #x20 to #xD7FF, #xE000 to #xFFFD, #x10000 to
     * #x10FFFF), and within the size limit.
     */
    public static boolean acceptableBody(String body) {
        if (body.isEmpty() || Limits.verifyMessageLength(body.length(), StrictSQSLimits$.MODULE$).isLeft()) {
            return false;
        }
        for (int i = 0; i < body.length(); ) {
            int c = body.codePointAt(i);
            boolean valid = c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD)
                    || (c >= 0x10000 && c <= 0x10FFFF);
            if (!valid) {
                return false;
            }
            i += Character.charCount(c);
        }
        return true;
    }

    /** Waits for an answer of ElasticMQ's, unwrapping its failure. */
    public static <T> T await(CompletableFuture<T> answer) {
        try {
            return answer.get(ASK_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for ElasticMQ", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("ElasticMQ did not answer within " + ASK_TIMEOUT, e);
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T ask(ActorRef actor, Object message) {
        return (T) await(Patterns.ask(actor, message, ASK_TIMEOUT).toCompletableFuture());
    }

    @SuppressWarnings("unchecked")
    private static Optional<Refusal> refusal(Object answer) {
        Either<ElasticMQError, ?> result = (Either<ElasticMQError, ?>) answer;
        if (result.isRight()) {
            return Optional.empty();
        }
        SQSException e = new SQSException.ElasticMQErrorOps(result.left().get()).toSQSException();
        return Optional.of(new Refusal(e.code(), e.message()));
    }

    private static List<String> expandAll(Collection<String> names) {
        return names.contains("All") ? ALL_ATTRIBUTES : List.copyOf(names);
    }

    /** As ElasticMQ's ReceiveMessageDirectives answers a message: the attributes asked for that have a value. */
    private Received received(MessageData message, List<String> attributeNames, Collection<String> messageAttributeNames) {
        Map<String, String> attributes = new LinkedHashMap<>();
        for (String name : attributeNames) {
            String value = switch (name) {
                case "SenderId" -> "127.0.0.1";
                case "SentTimestamp" -> Long.toString(message.created().toInstant().toEpochMilli());
                case "ApproximateReceiveCount" -> Integer.toString(message.statistics().approximateReceiveCount());
                case "MessageDeduplicationId" -> message.messageDeduplicationId().isEmpty() ? null
                        : message.messageDeduplicationId().get().id();
                case "MessageGroupId" -> message.messageGroupId().getOrElse(() -> null);
                case "ApproximateFirstReceiveTimestamp" -> Long.toString(
                        message.statistics().approximateFirstReceive() instanceof OnDateTimeReceived on
                                ? on.when().toInstant().toEpochMilli() : 0);
                case "AWSTraceHeader" -> message.tracingId().isEmpty() ? null : message.tracingId().get().id();
                case "SequenceNumber" -> message.sequenceNumber().getOrElse(() -> null);
                case "DeadLetterQueueSourceArn" -> message.deadLetterSourceQueueName().isEmpty() ? null
                        : "arn:aws:sqs:" + region + ":" + accountId + ":" + message.deadLetterSourceQueueName().get();
                default -> null;
            };
            if (value != null) {
                attributes.putIfAbsent(name, value);
            }
        }
        scala.collection.immutable.Map<String, MessageAttribute> chosen = chosenAttributes(message.messageAttributes(), messageAttributeNames);
        Map<String, Attribute> messageAttributes = new LinkedHashMap<>();
        chosen.foreachEntry((name, value) -> messageAttributes.put(name, attribute(value)));
        return new Received(message.id().id(), message.deliveryReceipt().get().receipt(), message.content().value(),
                md5Hex(message.content().value()), attributes, messageAttributes,
                chosen.isEmpty() ? null : MD5Util$.MODULE$.md5AttributeDigest(chosen));
    }

    /** "All" or ".*" = every attribute; else a name asked for, or one whose name, read as a pattern, is found in a name asked for (ElasticMQ's rule). */
    @SuppressWarnings("unchecked")
    private static scala.collection.immutable.Map<String, MessageAttribute> chosenAttributes(
            scala.collection.immutable.Map<String, MessageAttribute> all, Collection<String> asked) {
        if (all.isEmpty() || asked.contains("All") || asked.contains(".*")) {
            return all;
        }
        Set<String> names = Set.copyOf(asked);
        return (scala.collection.immutable.Map<String, MessageAttribute>) (Object) all.filter(entry -> names.contains(entry._1())
                || names.stream().anyMatch(s -> java.util.regex.Pattern.compile(entry._1()).matcher(s).find()));
    }

    private static Attribute attribute(MessageAttribute value) {
        return switch (value) {
            case StringMessageAttribute s -> new Attribute(value.getDataType(), s.stringValue(), null);
            case NumberMessageAttribute n -> new Attribute(value.getDataType(), n.stringValue(), null);
            case BinaryMessageAttribute b -> new Attribute(value.getDataType(), null, java.util.Base64.getDecoder().decode(b.asBase64()));
            default -> new Attribute(value.getDataType(), null, null);
        };
    }
}
