// The dashboard's entry point: defines every element; index.html holds <ss-app>.
import "./app/ss-app.ts";
