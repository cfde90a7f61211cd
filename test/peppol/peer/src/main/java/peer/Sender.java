package peer;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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

  static int run (final Map <String, String> opts) throws Exception
  {
    final JsonObject result = new JsonObject ();
    final JsonArray errors = new JsonArray ();
    final AtomicReference <String> sentMessageId = new AtomicReference <> (opts.get ("message-id"));
    boolean success = false;
    boolean receiptVerified = false;

    WebScopeManager.onGlobalBegin (MockServletContext.create ());
    try
    {
      final Main.Identity id = new Main.Identity (Main.required (opts, "keystore"), Main.required (opts, "password"));
      final X509Certificate ca = Main.readCertificate (Main.required (opts, "trust-ca"));
      final X509Certificate receiverCert = Main.readCertificate (Main.required (opts, "receiver-cert"));
      final byte [] payload = Files.readAllBytes (Path.of (Main.required (opts, "payload")));
      final String [] sender = schemeAndValue (Main.required (opts, "sender-id"), PARTICIPANT_SCHEME, PARTICIPANT_SCHEME);
      final String [] receiver = schemeAndValue (Main.required (opts, "receiver-id"), PARTICIPANT_SCHEME, PARTICIPANT_SCHEME);
      final String [] doctype = schemeAndValue (Main.required (opts, "doctype"), DOCTYPE_SCHEME, DOCTYPE_SCHEME, "peppol-doctype-wildcard");
      final String [] process = schemeAndValue (Main.required (opts, "process"), PROCESS_SCHEME, PROCESS_SCHEME, "cenbii-procid-ubl");
      final String tamper = opts.get ("tamper");
      if (tamper != null && !tamper.equals ("signature"))
        throw new IllegalArgumentException ("--tamper takes 'signature' only");

      // The receiver's certificate must really come from the test CA (phase4's own check below compares
      // the issuer's name only).
      final String receiverProblem = Main.checkIssuedBy (receiverCert, ca);
      if (receiverProblem != null)
      {
        errors.add (new JsonObject ().add ("code", "RECEIVER_CERTIFICATE_NOT_TRUSTED").add ("detail", receiverProblem));
        return finish (result, errors, false, sentMessageId.get (), false);
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
      builder.documentTypeID (SimpleIdentifierFactory.INSTANCE.createDocumentTypeIdentifier (doctype[0], doctype[1]))
             .processID (SimpleIdentifierFactory.INSTANCE.createProcessIdentifier (process[0], process[1]))
             .senderParticipantID (SimpleIdentifierFactory.INSTANCE.createParticipantIdentifier (sender[0], sender[1]))
             .receiverParticipantID (SimpleIdentifierFactory.INSTANCE.createParticipantIdentifier (receiver[0], receiver[1]))
             .senderPartyID (commonName (id.certificate))
             .countryC1 (Main.required (opts, "country-c1"))
             .payload (payload)
             .peppolAP_CAChecker (new PeppolCAChecker (ca))
             .receiverEndpointDetails (receiverCert, Main.required (opts, "to"))
             .cryptoFactory (Main.cryptoFactory (id, ca))
             .httpRetrySettings (new HttpRetrySettings ().setMaxRetries (0))
             .signalMsgConsumer ( (aSignalMsg, aMetadata, aState) -> {
               receiptSignatureChecked.set (aState.isSoapSignatureChecked ());
               receiptSigner.set (aState.getUsedCertificate ());
               signalErrors.addAll (aSignalMsg.getError ());
             });
      if (sentMessageId.get () != null)
        builder.messageID (sentMessageId.get ());
      else
        builder.messageID (java.util.UUID.randomUUID () + "@phase4-test-peer");
      sentMessageId.set (builder.messageID ());
      if (opts.containsKey ("dump-request"))
      {
        final File dump = new File (opts.get ("dump-request"));
        builder.outgoingDumper (new AS4OutgoingDumperFileBased ( (eMsgMode, sMessageID, nTry) -> dump));
      }
      if ("signature".equals (tamper))
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
        errors.add (new JsonObject ().add ("code", e.getErrorCode ())
                                     .add ("detail",
                                           e.getErrorDetail () != null ? e.getErrorDetail ()
                                                                       : e.getDescription () != null ? e.getDescription ()
                                                                                                              .getValue ()
                                                                                                     : e.getShortDescription ()));
      if (sendResult != EAS4UserMessageSendResult.SUCCESS && signalErrors.isEmpty ())
        errors.add (new JsonObject ().add ("code", sendResult.getID ())
                                     .add ("detail", failure.get () != null ? describe (failure.get ()) : sendResult.name ()));
      success = sendResult == EAS4UserMessageSendResult.SUCCESS;
      if (success)
      {
        final String signerProblem = receiptSigner.get () == null ? "The receipt carries no signing certificate"
                                                                  : Main.checkIssuedBy (receiptSigner.get (), ca);
        if (!receiptSignatureChecked.get ())
          errors.add (new JsonObject ().add ("code", "RECEIPT_NOT_SIGNED").add ("detail", "The receipt's signature was not checked"));
        else
          if (signerProblem != null)
            errors.add (new JsonObject ().add ("code", "RECEIPT_SIGNER_NOT_TRUSTED").add ("detail", signerProblem));
          else
            if (!nrrOk.get () || !nrrErrors.isEmpty ())
              errors.add (new JsonObject ().add ("code", "RECEIPT_DIGESTS_MISMATCH").add ("detail", String.join ("; ", nrrErrors)));
            else
              receiptVerified = true;
      }
    }
    catch (final Exception ex)
    {
      errors.add (new JsonObject ().add ("code", "PEER_ERROR").add ("detail", describe (ex)));
    }
    finally
    {
      WebScopeManager.onGlobalEnd ();
    }
    return finish (result, errors, success, sentMessageId.get (), receiptVerified);
  }

  private static int finish (final JsonObject result,
                             final JsonArray errors,
                             final boolean success,
                             final String messageId,
                             final boolean receiptVerified)
  {
    result.add ("success", success);
    result.add ("messageId", messageId == null ? "" : messageId);
    result.add ("receiptVerified", receiptVerified);
    result.add ("errors", errors);
    System.out.println (result.getAsJsonString ());
    return 0;
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
