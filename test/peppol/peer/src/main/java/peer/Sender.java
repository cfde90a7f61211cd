package peer;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import javax.annotation.Nonnull;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import com.helger.commons.base64.Base64;
import com.helger.json.JsonArray;
import com.helger.json.JsonObject;
import com.helger.peppol.utils.PeppolCAChecker;
import com.helger.peppolid.factory.SimpleIdentifierFactory;
import com.helger.phase4.client.IAS4ClientBuildMessageCallback;
import com.helger.phase4.crypto.IAS4CryptoFactory;
import com.helger.phase4.dump.AS4OutgoingDumperFileBased;
import com.helger.phase4.ebms3header.Ebms3Error;
import com.helger.phase4.messaging.http.HttpRetrySettings;
import com.helger.phase4.peppol.Phase4PeppolSender;
import com.helger.phase4.sender.EAS4UserMessageSendResult;
import com.helger.phase4.sender.IAS4SignalMessageValidationResultHandler;
import com.helger.servlet.mock.MockServletContext;
import com.helger.web.scope.mgr.WebScopeManager;

/**
 * The sending side: phase4-peppol-client wraps the payload in an SBDH and sends it under the Peppol
 * AS4 profile, then checks the synchronous receipt: its signature (WSS4J, against the test CA as the only
 * trust anchor), that the signer's certificate really carries the test CA's signature, and that the
 * receipt's non-repudiation digests are those of the message sent.
 */
final class Sender
{
  private Sender ()
  {}

  private static final String PARTICIPANT_SCHEME = "iso6523-actorid-upis";
  private static final String DOCTYPE_SCHEME = "busdox-docid-qns";
  private static final String PROCESS_SCHEME = "cenbii-procid-ubl";

  /** "scheme::value" or a bare value in the given default scheme. */
  static String [] schemeAndValue (final String s, final String defaultScheme, final String... knownSchemes)
  {
    for (final String scheme : knownSchemes)
      if (s.startsWith (scheme + "::"))
        return new String [] { scheme, s.substring (scheme.length () + 2) };
    return new String [] { defaultScheme, s };
  }

  /** Everything of one sending configuration that does not change from message to message. */
  static final class Job
  {
    final Main.Identity id;
    final X509Certificate ca;
    final X509Certificate receiverCert;
    final IAS4CryptoFactory crypto;
    final String [] sender;
    final String [] receiver;
    final String [] doctype;
    final String [] process;
    final String countryC1;
    final String to;
    final String tamper;
    final String dump;

    Job (final Map <String, String> opts) throws Exception
    {
      id = new Main.Identity (Main.required (opts, "keystore"), Main.required (opts, "password"));
      ca = Main.readCertificate (Main.required (opts, "trust-ca"));
      receiverCert = Main.readCertificate (Main.required (opts, "receiver-cert"));
      crypto = Main.cryptoFactory (id, ca);
      sender = schemeAndValue (Main.required (opts, "sender-id"), PARTICIPANT_SCHEME, PARTICIPANT_SCHEME);
      receiver = schemeAndValue (Main.required (opts, "receiver-id"), PARTICIPANT_SCHEME, PARTICIPANT_SCHEME);
      doctype = schemeAndValue (Main.required (opts, "doctype"), DOCTYPE_SCHEME, DOCTYPE_SCHEME, "peppol-doctype-wildcard");
      process = schemeAndValue (Main.required (opts, "process"), PROCESS_SCHEME, PROCESS_SCHEME);
      countryC1 = Main.required (opts, "country-c1");
      to = Main.required (opts, "to");
      tamper = opts.get ("tamper");
      if (tamper != null && !tamper.equals ("signature"))
        throw new IllegalArgumentException ("--tamper takes 'signature' only");
      dump = opts.get ("dump-request");
    }
  }

  private static com.helger.json.IJsonObject error (final String code, final String detail)
  {
    return new JsonObject ().add ("code", code).add ("detail", detail);
  }

  /** Sends one message and returns {success, messageId, receiptVerified, errors}. */
  static JsonObject sendOne (final Job job, final byte [] payload, final String messageId)
  {
    final JsonArray errors = new JsonArray ();
    boolean success = false;
    boolean receiptVerified = false;
    try
    {
      // The receiver's certificate must really come from the test CA (phase4's own check below compares
      // the issuer's name only).
      final String receiverProblem = Main.checkIssuedBy (job.receiverCert, job.ca);
      if (receiverProblem != null)
      {
        errors.add (error ("RECEIVER_CERTIFICATE_NOT_TRUSTED", receiverProblem));
        return result (false, messageId, false, errors);
      }

      final AtomicBoolean nrrOk = new AtomicBoolean (false);
      final List <String> nrrErrors = new ArrayList <> ();
      final AtomicReference <X509Certificate> receiptSigner = new AtomicReference <> ();
      final AtomicBoolean receiptSignatureChecked = new AtomicBoolean (false);
      final List <Ebms3Error> signalErrors = new ArrayList <> ();
      final IAS4SignalMessageValidationResultHandler nrrHandler = new IAS4SignalMessageValidationResultHandler ()
      {
        public void onSuccess ()
        {
          nrrOk.set (true);
        }

        public void onError (@Nonnull final String sErrorMsg)
        {
          nrrErrors.add (sErrorMsg);
        }

        public void onNotApplicable ()
        {
          nrrErrors.add ("The receipt carries no non-repudiation information to compare");
        }
      };

      // The result handler of the receipt's digest comparison has no setter in phase4 3.0.0, only a
      // protected field.
      final Phase4PeppolSender.PeppolUserMessageBuilder builder = new Phase4PeppolSender.PeppolUserMessageBuilder ()
      {
        {
          m_aSignalMsgValidationResultHdl = nrrHandler;
        }
      };
      builder.documentTypeID (SimpleIdentifierFactory.INSTANCE.createDocumentTypeIdentifier (job.doctype[0], job.doctype[1]))
             .processID (SimpleIdentifierFactory.INSTANCE.createProcessIdentifier (job.process[0], job.process[1]))
             .senderParticipantID (SimpleIdentifierFactory.INSTANCE.createParticipantIdentifier (job.sender[0], job.sender[1]))
             .receiverParticipantID (SimpleIdentifierFactory.INSTANCE.createParticipantIdentifier (job.receiver[0], job.receiver[1]))
             .senderPartyID (commonName (job.id.certificate))
             .countryC1 (job.countryC1)
             .payload (payload)
             .peppolAP_CAChecker (new PeppolCAChecker (job.ca))
             .receiverEndpointDetails (job.receiverCert, job.to)
             .cryptoFactory (job.crypto)
             .httpRetrySettings (new HttpRetrySettings ().setMaxRetries (0))
             .messageID (messageId)
             .signalMsgConsumer ( (aSignalMsg, aMetadata, aState) -> {
               receiptSignatureChecked.set (aState.isSoapSignatureChecked ());
               receiptSigner.set (aState.getUsedCertificate ());
               signalErrors.addAll (aSignalMsg.getError ());
             });
      if (job.dump != null)
      {
        final File dump = new File (job.dump);
        builder.outgoingDumper (new AS4OutgoingDumperFileBased ( (eMsgMode, sMessageID, nTry) -> dump));
      }
      if ("signature".equals (job.tamper))
        builder.buildMessageCallback (new IAS4ClientBuildMessageCallback ()
        {
          @Override
          public void onSignedSoapDocument (@Nonnull final Document aDoc)
          {
            tamperSignatureValue (aDoc);
          }
        });

      final AtomicReference <Exception> failure = new AtomicReference <> ();
      final EAS4UserMessageSendResult sendResult = builder.sendMessageAndCheckForReceipt (failure::set);
      for (final Ebms3Error e : signalErrors)
        errors.add (error (e.getErrorCode (),
                           e.getErrorDetail () != null ? e.getErrorDetail ()
                                                       : e.getDescription () != null ? e.getDescription ().getValue ()
                                                                                     : e.getShortDescription ()));
      if (sendResult != EAS4UserMessageSendResult.SUCCESS && signalErrors.isEmpty ())
        errors.add (error (sendResult.getID (), failure.get () != null ? describe (failure.get ()) : sendResult.name ()));
      success = sendResult == EAS4UserMessageSendResult.SUCCESS;
      if (success)
      {
        final String signerProblem = receiptSigner.get () == null ? "The receipt carries no signing certificate"
                                                                  : Main.checkIssuedBy (receiptSigner.get (), job.ca);
        if (!receiptSignatureChecked.get ())
          errors.add (error ("RECEIPT_NOT_SIGNED", "The receipt's signature was not checked"));
        else
          if (signerProblem != null)
            errors.add (error ("RECEIPT_SIGNER_NOT_TRUSTED", signerProblem));
          else
            if (!nrrOk.get () || !nrrErrors.isEmpty ())
              errors.add (error ("RECEIPT_DIGESTS_MISMATCH", String.join ("; ", nrrErrors)));
            else
              receiptVerified = true;
      }
    }
    catch (final Exception ex)
    {
      errors.add (error ("PEER_ERROR", describe (ex)));
    }
    return result (success, messageId, receiptVerified, errors);
  }

  private static String newMessageId ()
  {
    return UUID.randomUUID () + "@phase4-test-peer";
  }

  /** `send`: one message, one JSON line. */
  static int run (final Map <String, String> opts)
  {
    final String messageId = opts.getOrDefault ("message-id", newMessageId ());
    WebScopeManager.onGlobalBegin (MockServletContext.create ());
    try
    {
      final Job job = new Job (opts);
      final byte [] payload = Files.readAllBytes (Path.of (Main.required (opts, "payload")));
      System.out.println (sendOne (job, payload, messageId).getAsJsonString ());
    }
    catch (final Exception ex)
    {
      System.out.println (result (false, messageId, false, new JsonArray ().add (error ("PEER_ERROR", describe (ex)))).getAsJsonString ());
    }
    finally
    {
      WebScopeManager.onGlobalEnd ();
    }
    return 0;
  }

  /**
   * `send-many`: the same sending configuration for --count messages over --concurrency threads (a load
   * for benchmarks). Each message gets its own AS4 message id; the text {{SEQ}} in the payload is replaced
   * by the message's sequence number, so that every document is distinct. Prints one JSON line:
   * {sent, succeeded, receiptsVerified, seconds, messagesPerSecond, errors: [the first few]}.
   */
  static int runMany (final Map <String, String> opts)
  {
    WebScopeManager.onGlobalBegin (MockServletContext.create ());
    try
    {
      final Job job = new Job (opts);
      final String template = Files.readString (Path.of (Main.required (opts, "payload")), StandardCharsets.UTF_8);
      final int count = Integer.parseInt (opts.getOrDefault ("count", "100"));
      final int concurrency = Integer.parseInt (opts.getOrDefault ("concurrency", "4"));
      final AtomicInteger next = new AtomicInteger ();
      final AtomicInteger succeeded = new AtomicInteger ();
      final AtomicInteger verified = new AtomicInteger ();
      final JsonArray firstErrors = new JsonArray ();
      final long started = System.nanoTime ();
      final ExecutorService pool = Executors.newFixedThreadPool (concurrency);
      final List <Future <?>> workers = new ArrayList <> ();
      for (int t = 0; t < concurrency; t++)
        workers.add (pool.submit ( () -> {
          for (int n = next.getAndIncrement (); n < count; n = next.getAndIncrement ())
          {
            final byte [] payload = template.replace ("{{SEQ}}", Integer.toString (n)).getBytes (StandardCharsets.UTF_8);
            final JsonObject one = sendOne (job, payload, newMessageId ());
            if (one.getAsBoolean ("success"))
              succeeded.incrementAndGet ();
            if (one.getAsBoolean ("receiptVerified"))
              verified.incrementAndGet ();
            else
              synchronized (firstErrors)
              {
                if (firstErrors.size () < 5)
                  firstErrors.addAll (one.getAsArray ("errors"));
              }
          }
        }));
      for (final Future <?> w : workers)
        w.get ();
      pool.shutdown ();
      final double seconds = (System.nanoTime () - started) / 1e9;
      final JsonObject out = new JsonObject ();
      out.add ("sent", count);
      out.add ("succeeded", succeeded.get ());
      out.add ("receiptsVerified", verified.get ());
      out.add ("seconds", Math.round (seconds * 1000) / 1000.0);
      out.add ("messagesPerSecond", Math.round (count / seconds * 10) / 10.0);
      out.add ("errors", firstErrors);
      System.out.println (out.getAsJsonString ());
    }
    catch (final Exception ex)
    {
      System.out.println (new JsonObject ().add ("sent", 0).add ("errors", new JsonArray ().add (error ("PEER_ERROR", describe (ex)))).getAsJsonString ());
    }
    finally
    {
      WebScopeManager.onGlobalEnd ();
    }
    return 0;
  }

  private static JsonObject result (final boolean success,
                                    final String messageId,
                                    final boolean receiptVerified,
                                    final JsonArray errors)
  {
    final JsonObject result = new JsonObject ();
    result.add ("success", success);
    result.add ("messageId", messageId == null ? "" : messageId);
    result.add ("receiptVerified", receiptVerified);
    result.add ("errors", errors);
    return result;
  }

  private static String describe (final Throwable ex)
  {
    final StringBuilder sb = new StringBuilder ();
    for (Throwable t = ex; t != null; t = t.getCause ())
    {
      if (sb.length () > 0)
        sb.append (" <- ");
      sb.append (t.getClass ().getSimpleName ()).append (": ").append (t.getMessage ());
    }
    return sb.toString ();
  }

  private static String commonName (final X509Certificate cert)
  {
    for (final String part : cert.getSubjectX500Principal ().getName ().split (","))
      if (part.trim ().startsWith ("CN="))
        return part.trim ().substring (3);
    throw new IllegalArgumentException ("No CN in " + cert.getSubjectX500Principal ());
  }

  /** Flips one bit of the signature value after signing: the receiver must refuse the message. */
  static void tamperSignatureValue (final Document doc)
  {
    final NodeList values = doc.getElementsByTagNameNS ("http://www.w3.org/2000/09/xmldsig#", "SignatureValue");
    if (values.getLength () == 0)
      throw new IllegalStateException ("No ds:SignatureValue to tamper with");
    final Element value = (Element) values.item (0);
    final byte [] sig = Base64.safeDecode (value.getTextContent ().replaceAll ("\\s", ""));
    sig[sig.length / 2] ^= 0x01;
    value.setTextContent (Base64.safeEncodeBytes (sig));
  }
}
