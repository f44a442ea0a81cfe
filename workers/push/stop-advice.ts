// What an operator does about a provider that stopped sending. The reasons are
// the ones the providers record in push.credentials.stopped_reason (providers/
// apns.ts, providers/fcm.ts); the meanings are Apple's and Google's (reference
// push.md 1.4 and 2.2). Sending resumes when keys are stored again.

const RESUME = 'Storing keys again (the same or new) resumes sending; deliveries held meanwhile go out then.'

const ADVICE: Array<[RegExp, string]> = [
  [/^APNs: (InvalidProviderToken|MissingProviderToken)$/, 'Apple refused the signing key: check that the key id and team id belong to this .p8 file, that the key has Apple Push Notifications enabled and is not revoked in the developer account, and that the environment (production or sandbox) is the app\'s.'],
  [/^APNs: (BadTopic|TopicDisallowed|MissingTopic)$/, 'Apple refused the topic: set the app\'s bundle id exactly as in the developer account, for an app of this key\'s team.'],
  [/^APNs: (BadCertificate|BadCertificateEnvironment|Forbidden)$/, 'Apple refused the connection\'s credentials: upload a current .p8 signing key of this team.'],
  [/^APNs: the stored key cannot sign/, 'The stored key cannot sign provider tokens: upload the .p8 file again, as downloaded.'],
  [/^FCM: service account refused/, 'Google refused the service account\'s key (deleted, disabled or expired): make a new key for the service account in the Google Cloud console and upload its file.'],
  [/^FCM: THIRD_PARTY_AUTH_ERROR$/, 'FCM could not reach Apple or Web Push for this Firebase project: upload the APNs key in the Firebase console (Project settings, Cloud Messaging).'],
  [/^FCM: (PERMISSION_DENIED|HTTP 403|SENDER_ID_MISMATCH)$/, 'The service account may not send for this Firebase project: give it the Firebase Cloud Messaging API Admin role, or upload the file of the app\'s own Firebase project.'],
  [/^FCM: (UNAUTHENTICATED|HTTP 401)$/, 'FCM did not accept the service account\'s tokens: check that the Firebase Cloud Messaging API is enabled for the project, then upload the file again.'],
]

/** What to do about a stop, in a sentence or two; always says how sending resumes. */
export function stopAdvice(reason: string): string {
  const match = ADVICE.find(([pattern]) => pattern.test(reason))
  return match ? `${match[1]} ${RESUME}` : `Check the provider's keys and configuration. ${RESUME}`
}
