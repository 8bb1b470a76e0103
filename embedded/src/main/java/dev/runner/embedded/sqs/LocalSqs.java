package dev.runner.embedded.sqs;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Props;
import org.elasticmq.NodeAddress;
import org.elasticmq.StrictSQSLimits$;
import org.elasticmq.actor.QueueManagerActor;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;
import org.elasticmq.util.NowProvider;
import scala.Option;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * ElasticMQ on an actor system of ours, so its queues can also be reached in-process
 * ({@link #queues()}), optionally behind the SQS front end ({@link SqsFrontEnd}), which then is the
 * endpoint: queue URLs name it. ARNs are written as AWS writes them for us-east-1, so they match
 * what the template and events say.
 */
public final class LocalSqs implements AutoCloseable {

    private static final String REGION = "us-east-1";
    private static final String ACCOUNT = "000000000000";
    /**
     * Pekko's default dispatcher keeps at least 8 threads; ElasticMQ's queue actors do little per
     * message, and on a small machine more threads than cores only add wake-ups.
     */
    private static final Config DISPATCHER = ConfigFactory.parseString("""
            pekko.actor.default-dispatcher.fork-join-executor.parallelism-min = 2
            pekko.actor.default-dispatcher.fork-join-executor.parallelism-max = 4
            """);

    private final List<AutoCloseable> started = new ArrayList<>();
    private ElasticMqQueues queues;
    private SqsFrontEnd front;
    private String endpoint;

    private LocalSqs() {}

    /** On {@code host:port} (0 = a free port); with {@code frontEnd}, the front end listens there and ElasticMQ's REST server on a free port. */
    public static LocalSqs start(String host, int port, boolean frontEnd) {
        var sqs = new LocalSqs();
        try {
            sqs.startAll(host, port, frontEnd);
            return sqs;
        } catch (RuntimeException e) {
            sqs.close();
            throw e;
        }
    }

    /** The SQS endpoint, {@code http://host:port}. */
    public String endpoint() {
        return endpoint;
    }

    /** What the front end answered itself and what it passed on; none without a front end. */
    public SqsFrontEnd.Traffic frontEndTraffic() {
        return front == null ? new SqsFrontEnd.Traffic(0, 0) : front.traffic();
    }

    /** The front end, which every request over HTTP reaches; null without one. */
    public SqsFrontEnd frontEnd() {
        return front;
    }

    /** ElasticMQ's queues in-process. */
    public ElasticMqQueues queues() {
        return queues;
    }

    private void startAll(String host, int port, boolean frontEnd) {
        ActorSystem system = ActorSystem.create("elasticmq", DISPATCHER.withFallback(ConfigFactory.load()));
        started.add(() -> {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
        });
        ActorRef queueManager = system.actorOf(Props.create(QueueManagerActor.class,
                () -> new QueueManagerActor(new NowProvider(), StrictSQSLimits$.MODULE$, Option.empty())));
        queues = new ElasticMqQueues(queueManager, REGION, ACCOUNT);
        var builder = SQSRestServerBuilder.withActorSystem(system).withQueueManagerActor(queueManager)
                .withInterface(host).withAWSRegion(REGION).withAWSAccountId(ACCOUNT);
        if (!frontEnd) {
            SQSRestServer rest = builder.withPort(port).start();
            int restPort = rest.waitUntilStarted().localAddress().getPort();
            started.add(rest::stopAndWait);
            endpoint = "http://" + host + ":" + restPort;
            return;
        }
        front = SqsFrontEnd.bind(host, port, queues);
        started.add(front);
        // Queue URLs name the front end, so clients keep talking to it.
        SQSRestServer rest = builder.withPort(0).withServerAddress(new NodeAddress("http", host, front.port(), "")).start();
        int restPort = rest.waitUntilStarted().localAddress().getPort();
        started.add(rest::stopAndWait);
        front.start(URI.create("http://" + host + ":" + restPort));
        endpoint = "http://" + host + ":" + front.port();
    }

    /** Stops the front end and ElasticMQ's REST server, then the actor system (which ends long polls in progress). */
    @Override
    public void close() {
        for (int i = started.size() - 1; i >= 0; i--) {
            try {
                started.get(i).close();
            } catch (Exception e) {
                System.err.println("SQS did not stop cleanly: " + e);
            }
        }
        started.clear();
    }
}
