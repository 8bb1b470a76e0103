package dev.runner;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaConstructor;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.Architectures;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import javax.net.ssl.SSLSocket;
import java.net.HttpURLConnection;
import java.net.Socket;
import java.net.URLConnection;
import java.nio.channels.SocketChannel;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.constructors;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The core's dependencies point one way (docs/architecture.md): foundations (JSON, config, the
 * Postgres/Redis/SQS clients) at the bottom, entities and their stores above them, the pipeline
 * that orchestrates them above that, the edges (management API, webhooks) and the composition
 * root on top. Lambda types never enter the core.
 */
class ArchitectureTest {

    private static JavaClasses core;

    @BeforeAll
    static void importCore() {
        core = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                // The embedded servers are on the test classpath (the harness), not part of the core.
                .withImportOption(location -> !location.contains("/dev/runner/embedded/"))
                .importPackages("dev.runner");
    }

    @Test
    void packagesHaveNoCycles() {
        slices().matching("dev.runner.(*)..").should().beFreeOfCycles().check(core);
    }

    @Test
    void dependenciesPointFromEdgesToFoundations() {
        Architectures.layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("Foundation").definedBy("dev.runner.json..", "dev.runner.log..", "dev.runner.config..", "dev.runner.trigger..",
                        "dev.runner.security..", "dev.runner.http..", "dev.runner.store..", "dev.runner.redis..", "dev.runner.queue..",
                        "dev.runner.cost..", "dev.runner.metrics..", "dev.runner.cache..", "dev.runner.secrets..", "dev.runner.aws..")
                .layer("Domain").definedBy("dev.runner.integration..", "dev.runner.run..", "dev.runner.item..", "dev.runner.dlq..",
                        "dev.runner.pause..", "dev.runner.schedule..", "dev.runner.guard..", "dev.runner.handler..",
                        "dev.runner.apikey..", "dev.runner.delivery..", "dev.runner.outbox..", "dev.runner.bulk..", "dev.runner.backlog..",
                        "dev.runner.waiting..", "dev.runner.callback..")
                .layer("Pipeline").definedBy("dev.runner.pipeline..", "dev.runner.intake..")
                .layer("Edge").definedBy("dev.runner.api..", "dev.runner.webhook..")
                .layer("Composition").definedBy("dev.runner.app..")
                .whereLayer("Composition").mayNotBeAccessedByAnyLayer()
                .whereLayer("Edge").mayOnlyBeAccessedByLayers("Composition")
                .whereLayer("Pipeline").mayOnlyBeAccessedByLayers("Edge", "Composition")
                .whereLayer("Domain").mayOnlyBeAccessedByLayers("Pipeline", "Edge", "Composition")
                .check(core);
    }

    /** The one HTTP server in the core is the loopback one the handler client's priming starts before a checkpoint. */
    @Test
    void theCoreKnowsNothingOfLambdaOrHttpServers() {
        noClasses().that().resideInAPackage("dev.runner..").and().doNotHaveFullyQualifiedName("dev.runner.handler.HandlerCallPriming")
                .should().dependOnClassesThat().resideInAnyPackage("com.amazonaws.services.lambda..", "com.sun.net.httpserver..")
                .check(core);
    }

    /** Domain results are reasons; only the edges turn them into status codes and HTTP answers. */
    @Test
    void transportStaysAtTheEdges() {
        noClasses().that().resideInAnyPackage("dev.runner.pipeline..", "dev.runner.intake..", "dev.runner.integration..", "dev.runner.run..",
                        "dev.runner.item..", "dev.runner.dlq..", "dev.runner.pause..", "dev.runner.schedule..", "dev.runner.guard..",
                        "dev.runner.handler..", "dev.runner.apikey..", "dev.runner.delivery..")
                .should().dependOnClassesThat().resideInAPackage("dev.runner.http..")
                .check(core);
    }

    /**
     * Handler calls go through one HTTP client, Apache HttpClient 5 as {@code handler.HandlerTransport}
     * sets it up (screened addresses, limits, deadlines): no other class uses it, and nothing in the
     * core opens a socket, a {@code URLConnection} or the JDK's HTTP client (AWS requests go through
     * the SDK's clients, whose URL-connection transport is the SDK's own).
     */
    @Test
    void httpGoesOnlyThroughTheChosenClients() {
        noClasses().that().resideOutsideOfPackage("dev.runner.handler..")
                .should().dependOnClassesThat().resideInAPackage("org.apache.hc..")
                .check(core);
        // PostgresTls is pgjdbc's sslfactory: it picks the socket's cipher suites, it speaks no protocol of its own.
        noClasses().that().resideInAPackage("dev.runner..").and().doNotHaveFullyQualifiedName("dev.runner.store.PostgresTls")
                .should().dependOnClassesThat().resideInAPackage("java.net.http..")
                .orShould().dependOnClassesThat().belongToAnyOf(Socket.class, SSLSocket.class, SocketChannel.class, URLConnection.class,
                        HttpURLConnection.class)
                .check(core);
    }

    /** AWS only through the SDK's clients, built by the composition root and the SQS and Secrets Manager clients. */
    @Test
    void awsIsReachedOnlyThroughTheSdksClients() {
        noClasses().that().resideInAPackage("dev.runner..")
                .and().resideOutsideOfPackages("dev.runner.aws..", "dev.runner.queue..", "dev.runner.secrets..", "dev.runner.app..")
                .should().dependOnClassesThat().resideInAnyPackage("software.amazon.awssdk..")
                .check(core);
    }

    /** Nothing hand-signs an AWS request or posts one itself: no signer of the SDK's used directly, no HTTP or HMAC of the JDK's beside the clients. */
    @Test
    void nothingSignsAwsRequestsByHand() {
        noClasses().that().resideInAPackage("dev.runner..")
                .should().dependOnClassesThat().resideInAnyPackage("software.amazon.awssdk.http.auth.aws.signer..",
                        "software.amazon.awssdk.auth.signer..")
                .check(core);
        noClasses().that().resideInAnyPackage("dev.runner.aws..", "dev.runner.queue..", "dev.runner.secrets..")
                .should().dependOnClassesThat().resideInAnyPackage("javax.crypto..", "java.net.http..")
                .orShould().dependOnClassesThat().belongToAnyOf(java.net.HttpURLConnection.class)
                .check(core);
    }

    /**
     * One capability per class: a class that needs more than six collaborators holds more than one, and the
     * seams between them want a class of their own. Records are messages and configuration, not capabilities.
     */
    @Test
    void noClassTakesMoreThanSixCollaborators() {
        constructors().that().areDeclaredInClassesThat(DescribedPredicate.describe("are not records", (JavaClass c) -> !c.isRecord()))
                .should(takeAtMost(6))
                .check(core);
    }

    private static ArchCondition<JavaConstructor> takeAtMost(int collaborators) {
        return new ArchCondition<>("take at most " + collaborators + " parameters") {
            @Override
            public void check(JavaConstructor constructor, ConditionEvents events) {
                int taken = constructor.getRawParameterTypes().size();
                if (taken > collaborators) {
                    events.add(SimpleConditionEvent.violated(constructor, constructor.getFullName() + " takes " + taken + " parameters"));
                }
            }
        };
    }
}
