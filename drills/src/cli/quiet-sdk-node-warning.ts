/**
 * On Node 20 (in package.json's engines, and this repository's machines) the AWS SDK warns once per
 * process that its releases after January 2027 need Node 22. In the demo that warning is noise: it
 * lands between the progress lines of the demo and of every daemon it starts, and its reader can do
 * nothing about it there. The SDK's own switch turns off that one warning and nothing else (every
 * other `process.emitWarning` still prints). The daemons inherit it from the demo's environment;
 * run on their own they keep it, where it is the notice to move to the image's Node 22.
 *
 * Imported first by the demo's entry points, before anything constructs an SDK client (the SDK
 * checks the version when a client is constructed). A value already set is left as it is.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
