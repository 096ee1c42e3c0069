// Package curpclient is CURP's client core, and the strong path of the
// hybrid protocols' client cores (package curp describes the protocol; the
// replicas' side is there). A client sends each strong operation to every
// replica and completes it after one round trip when the leader's
// speculative ok and the witnesses' oks reach a superquorum, else on the
// leader's sync reply.
//
// Client's Submit, Tick and Step make it plain CURP's core, which sends weak
// operations down the strong path. A hybrid protocol's core (packages
// htclient and hoclient) owns a Client and calls its parts instead: Start
// numbers an operation, SendStrong, Due and Resend send and re-send it,
// Receive and StepStrong take the replies, and a reply that completes a
// superquorum is returned for the hybrid to vet before CompleteFast. Every
// completion is returned to the caller as it is queued, so a hybrid sees
// each one before the driver does. The Client never calls its owner.
package curpclient
